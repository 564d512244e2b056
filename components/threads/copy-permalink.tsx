"use client";

import { useState } from "react";

export function CopyPermalink({ path }: { path: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      data-testid="copy-permalink"
      onClick={async () => {
        await navigator.clipboard?.writeText(new URL(path, window.location.origin).toString());
        setCopied(true);
        setTimeout(() => setCopied(false), 2000);
      }}
      className="rounded px-2 py-1 ring-1 ring-slate-300 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-sky-600"
    >
      <span aria-live="polite">{copied ? "Copied" : "Copy permalink"}</span>
    </button>
  );
}
