"use client";

import { Timestamp } from "@/components/time/timestamp";
import { useLiveState } from "./live-updates";

const STALE_AFTER_MS = 10_000;

/** "live", "reconnecting…", "stale since 14:05:03" once the stream has been down a while, "offline" once the tab stopped trying, or "signed out". */
export function LiveIndicator({ lastUpdated }: { lastUpdated: number | null }) {
  const { status, since } = useLiveState();
  const stale = status === "reconnecting" && since !== null && Date.now() - since > STALE_AFTER_MS;
  if (status === "signed-out") {
    return (
      <span data-testid="live-indicator" data-status="signed-out" className="inline-flex items-center gap-2 text-sm text-slate-700">
        <span aria-hidden className="inline-block h-2.5 w-2.5 rounded-full bg-red-500" />
        <span role="status">signed out</span>
        <a href="/sign-in" className="underline">sign in</a>
      </span>
    );
  }
  const label = status === "live" ? "live" : stale ? "stale since" : status === "reconnecting" ? "reconnecting…" : status === "offline" ? "offline (reload to retry)" : "connecting…";
  const dot = status === "live" ? "bg-emerald-500" : stale || status === "offline" ? "bg-red-500" : "bg-amber-400";
  return (
    <span data-testid="live-indicator" data-status={stale ? "stale" : status} className="inline-flex items-center gap-2 text-sm text-slate-700">
      <span aria-hidden className={`inline-block h-2.5 w-2.5 rounded-full ${dot} ${status === "live" ? "animate-pulse" : ""}`} />
      <span role="status">{label}</span>
      {stale && lastUpdated !== null && <Timestamp iso={new Date(lastUpdated).toISOString()} withDate={false} />}
    </span>
  );
}
