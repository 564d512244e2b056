/** Pure formatting for the dashboard: durations, countdowns, relative times, kind labels and sizes. */
import { clockDuration, humanDuration } from "@/lib/retry/duration";
import { isThreadStatus, isTroubleKind, type ThreadStatus, type TroubleKind } from "@/lib/retry/types";

/** The dashboard's durations live with the engine's, in one module. */
export { clockDuration, humanDuration } from "@/lib/retry/duration";

/** A countdown: "in 0:43", "~0:43" when the time is an estimate, "overdue 0:12" once it has passed. */
export function countdownText(targetMs: number, nowMs: number, estimated: boolean): string {
  const delta = targetMs - nowMs;
  if (delta < 0) return `overdue ${clockDuration(-delta)}`;
  return estimated ? `~${clockDuration(delta)}` : `in ${clockDuration(delta)}`;
}

/** "in 2 h 03 min", "in 5 min", "in 45 s": how long until a scheduled moment, to the minute. */
export function untilText(targetMs: number, nowMs: number): string {
  const delta = Math.max(0, targetMs - nowMs);
  if (delta < 60_000) return `in ${Math.ceil(delta / 1000)} s`;
  const minutes = Math.ceil(delta / 60_000);
  if (minutes < 60) return `in ${minutes} min`;
  return `in ${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} min`;
}

/** "in 12 min", "3 h ago", "in 45 s" — coarse relative time for reset times. */
export function relativeTime(targetMs: number, nowMs: number): string {
  const delta = targetMs - nowMs;
  const abs = Math.abs(delta);
  let text: string;
  if (abs < 60_000) text = `${Math.round(abs / 1000)} s`;
  else if (abs < 3_600_000) text = `${Math.round(abs / 60_000)} min`;
  else if (abs < 48 * 3_600_000) text = `${(abs / 3_600_000).toFixed(abs < 10 * 3_600_000 ? 1 : 0).replace(/\.0$/, "")} h`;
  else text = `${Math.round(abs / 86_400_000)} d`;
  return delta >= 0 ? `in ${text}` : `${text} ago`;
}

const KIND_LABELS: Record<TroubleKind, string> = {
  rate_limit: "429 rate limit",
  capacity: "capacity",
  usage_limit: "usage limit",
  transport: "transport",
  auth: "auth",
  invalid_request: "invalid request",
  other: "other",
};

export function kindLabel(kind: string | null | undefined): string {
  if (!kind) return "—";
  return isTroubleKind(kind) ? KIND_LABELS[kind] : kind;
}

const STATUS_LABELS: Record<ThreadStatus, string> = {
  running: "running",
  retrying: "retrying",
  waiting_reset: "waiting for reset",
  stalled: "stalled",
  recovered: "recovered",
  exhausted: "exhausted",
  failed: "failed",
  recovery_scheduled: "recovery scheduled",
  stopping: "stopping",
  stopped: "stopped",
  broken: "broken",
  completed: "completed",
  idle: "idle",
};

export function statusLabel(status: string): string {
  return isThreadStatus(status) ? STATUS_LABELS[status] : status;
}

/** "Retrying 2/5", or "Retrying 2" when the maximum is unknown (unlimited or unsaid). */
export function attemptLabel(attempt: number | null, maxAttempts: number | null): string {
  if (attempt == null) return "Retrying";
  return maxAttempts == null ? `Retrying ${attempt}` : `Retrying ${attempt}/${maxAttempts}`;
}

/**
 * An episode's calls and the agent's own retry time: "failed after 5 attempts (11.5 s retrying)",
 * "3 attempts so far" while it runs. Attempts are calls, the first included.
 */
export function episodeAttemptsText(episode: { outcome: string | null; attemptsMade: number; reportedRetryMs: number | null }): string {
  const calls = `${episode.attemptsMade} attempt${episode.attemptsMade === 1 ? "" : "s"}`;
  const retrying = episode.reportedRetryMs == null ? "" : ` (${retryTime(episode.reportedRetryMs)} retrying)`;
  return episode.outcome === null ? `${calls} so far${retrying}` : `${episode.outcome} after ${calls}${retrying}`;
}

/** Seconds to a tenth below a minute ("11.5 s"), as a source reports its retry time; longer, a human duration. */
function retryTime(ms: number): string {
  return ms < 60_000 ? `${Number((ms / 1000).toFixed(1))} s` : humanDuration(ms);
}

/** A stored size in binary units: "812 B", "4.2 KiB", "1.5 GiB". */
export function byteSize(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value < 10 ? value.toFixed(1) : Math.round(value)} ${units[unit]}`;
}

/** A share of a quota, never shown as 0 % while anything is used: "< 1 %", "37 %". */
export function quotaShare(used: number, limit: number): string {
  const percent = (used / limit) * 100;
  return used > 0 && percent < 1 ? "< 1 %" : `${Math.round(percent)} %`;
}

/**
 * An error code cut where a narrow column may break it: after each `_`, `.`, `/` or `-`, so
 * "503 server_is_overloaded" wraps as "503 server_is_" / "overloaded", not mid-word. The pieces
 * joined give the code back.
 */
export function codeBreaks(code: string): string[] {
  return code.split(/(?<=[_./-])/);
}
