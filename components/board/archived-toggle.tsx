"use client";

import Link from "next/link";
import { usePathname, useSearchParams } from "next/navigation";

/** Archived and snoozed threads are hidden from the board; this link shows them (or hides them again) through the URL filter. */
export function ArchivedToggle() {
  const pathname = usePathname();
  const params = new URLSearchParams(useSearchParams());
  const showing = params.has("archived");
  if (showing) params.delete("archived");
  else params.set("archived", "show");
  params.delete("page");
  const text = params.toString();
  return (
    <Link href={text ? `${pathname}?${text}` : pathname} scroll={false} className="text-sm text-sky-800 underline-offset-2 hover:underline" data-testid="archived-toggle">
      {showing ? "Hide archived and snoozed" : "Show archived and snoozed"}
    </Link>
  );
}
