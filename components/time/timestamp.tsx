"use client";

import { useTimeZone } from "./time-zone";

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(mode: "utc" | "local", withDate: boolean): Intl.DateTimeFormat {
  const key = `${mode}:${withDate}`;
  let f = formatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat("en-GB", {
      timeZone: mode === "utc" ? "UTC" : undefined,
      ...(withDate ? { year: "numeric", month: "short", day: "2-digit" } : {}),
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hour12: false,
    });
    formatters.set(key, f);
  }
  return f;
}

/** Formats an instant in the chosen zone: "29 Nov 2026, 14:05:00 UTC" or "14:05:00 UTC". */
export function formatInstant(iso: string, mode: "utc" | "local", withDate = true): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${formatter(mode, withDate).format(date)}${mode === "utc" ? " UTC" : ""}`;
}

/** A time as people read it, with the exact UTC instant in `datetime` for machines. */
export function Timestamp({ iso, withDate = true, className }: { iso: string | null; withDate?: boolean; className?: string }) {
  const { mode } = useTimeZone();
  if (!iso) return <span className="text-slate-400">—</span>;
  return (
    <time dateTime={iso} title={formatInstant(iso, mode === "utc" ? "local" : "utc")} className={className}>
      {formatInstant(iso, mode, withDate)}
    </time>
  );
}
