"use client";

import { countdownText, relativeTime, untilText } from "@/lib/ui/format";
import { useServerNow } from "./server-clock";
import { Timestamp } from "./timestamp";

/**
 * A live countdown to an instant. role="timer" with aria-live off: screen readers can read it
 * on demand without every tick being announced.
 */
export function Countdown({ to, estimated = false, testId = "countdown" }: { to: string | null; estimated?: boolean; testId?: string }) {
  const now = useServerNow();
  if (!to) return <span className="text-slate-400">—</span>;
  const target = Date.parse(to);
  const text = now === null ? "" : countdownText(target, now, estimated);
  const overdue = now !== null && target < now;
  return (
    <span
      role="timer"
      aria-live="off"
      aria-atomic="true"
      data-testid={testId}
      data-target={to}
      className={`font-mono tabular-nums ${overdue ? "text-red-700" : "text-slate-900"}`}
    >
      <time dateTime={to}>{text}</time>
    </span>
  );
}

/** "Resumes at 17:59:12 (in 2 h 03 min)": a scheduled continuation, ticking. */
export function ResumesAt({ at }: { at: string }) {
  const now = useServerNow(1000);
  return (
    <span data-testid="resumes-at" data-target={at}>
      Resumes at <Timestamp iso={at} withDate={false} />
      {now !== null && <span> ({untilText(Date.parse(at), now)})</span>}
    </span>
  );
}

/** "resets 14:05:00 UTC, in 12 min": absolute and relative form together. */
export function ResetTime({ at }: { at: string | null }) {
  const now = useServerNow(15_000);
  if (!at) return <span className="text-slate-400">—</span>;
  return (
    <span data-testid="reset-time">
      resets <Timestamp iso={at} withDate={false} />
      {now !== null && <span className="text-slate-600">, {relativeTime(Date.parse(at), now)}</span>}
    </span>
  );
}
