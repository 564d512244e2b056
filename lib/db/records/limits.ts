import type { LimitSnapshot } from "@/lib/ingest/limit-snapshots";

/** A limit snapshot as both stores write it (lib/db/limits.ts, lib/db/postgres/limits.ts). */
export function limitRow(sourceId: string, s: LimitSnapshot) {
  return {
    sourceId,
    account: s.account ?? "",
    provider: s.provider,
    window: s.window,
    usedPercent: s.usedPercent,
    windowMinutes: s.windowMinutes === null ? null : Math.round(s.windowMinutes),
    resetAt: s.resetAt,
    status: s.status,
    observedAt: s.observedAt,
    threadId: s.threadId,
    reachedType: s.reachedType ?? null,
  };
}
