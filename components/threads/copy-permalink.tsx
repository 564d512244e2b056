"use client";

import { useState } from "react";
import { styles } from "@/components/ui/controls";

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
      className={styles.chipButton}
    >
      <span aria-live="polite">{copied ? "Copied" : "Copy permalink"}</span>
    </button>
  );
}
