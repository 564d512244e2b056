import { incidentTimeLostMs, type IncidentRecord, type IncidentThread } from "@/lib/retry";
import type { IncidentDetail, IncidentThreadView, IncidentView } from "@/lib/wire/types";

/**
 * Incidents as both stores' statements answer them (lib/db/incidents.ts,
 * lib/db/postgres/incidents.ts; times in epoch ms, threads as JSON text), and their views.
 */

const isoOrNull = (ms: number | null) => (ms == null ? null : new Date(ms).toISOString());

export interface IncidentRow {
  id: string;
  state: IncidentRecord["state"];
  kind: IncidentRecord["kind"];
  provider: string | null;
  model: string | null;
  sourceId: string | null;
  startedAt: number;
  lastNoticeAt: number;
  endedAt: number | null;
  closedBy: IncidentRecord["closedBy"];
  notices: number;
  resetAt: number | null;
  threadCount: number;
  threads: string;
  acknowledgedBy: string | null;
  acknowledgedAt: number | null;
  silencedUntil?: number | null;
  sourceName?: string | null;
}

export const toRecord = ({ threadCount: _count, sourceName: _name, acknowledgedBy: _by, acknowledgedAt: _at, silencedUntil: _silenced, threads, ...row }: IncidentRow): IncidentRecord => ({
  ...row,
  threads: JSON.parse(threads) as IncidentThread[],
});

export const keysOf = (record: IncidentRecord) => JSON.stringify(record.threads.map((t) => t.thread));

/** `stoppable`: what Stop all in this incident would stop now (open incidents only). */
export function toView(row: IncidentRow, now: number, stoppable: number): IncidentView {
  const record = toRecord(row);
  return {
    id: row.id,
    state: row.state === "open" ? "open" : "closed",
    kind: row.kind,
    provider: row.provider,
    model: row.model,
    sourceId: row.sourceId,
    scope: row.sourceId !== null ? (row.sourceName ?? row.sourceId) : [row.provider ?? "unknown provider", row.model ?? "any model"].join(" · "),
    startedAt: isoOrNull(row.startedAt)!,
    lastNoticeAt: isoOrNull(row.lastNoticeAt)!,
    endedAt: isoOrNull(row.endedAt),
    closedBy: row.closedBy,
    threadCount: row.threadCount,
    threadKeys: record.threads.map((t) => t.thread),
    stoppable: row.state === "open" ? stoppable : 0,
    notices: row.notices,
    resetAt: isoOrNull(row.resetAt),
    timeLostMs: incidentTimeLostMs(record, now),
    acknowledgedBy: row.acknowledgedBy,
    acknowledgedAt: isoOrNull(row.acknowledgedAt),
    silencedUntil: row.silencedUntil != null && row.silencedUntil > now ? isoOrNull(row.silencedUntil) : null,
  };
}


/** A thread of an incident as the detail reads it from the threads table. */
export type IncidentThreadRow = Omit<IncidentThreadView, "firstNoticeAt" | "lastNoticeAt" | "notices" | "recoveredAt">;

/** One incident with its threads, timeline (notices per minute and thread), early retries and notes. */
export function toIncidentDetail(
  row: IncidentRow,
  now: number,
  parts: {
    stoppable: number;
    threads: IncidentThreadRow[];
    timeline: { minute: number; thread: number; notices: number }[];
    earlyRetries: number;
    notes: { at: number; actor: string; text: string }[];
  },
): IncidentDetail {
  const threads = new Map(parts.threads.map((t) => [t.key, t]));
  return {
    ...toView(row, now, parts.stoppable),
    threads: toRecord(row).threads.flatMap((t) => {
      const thread = threads.get(t.thread);
      if (!thread) return [];
      return [{ ...thread, firstNoticeAt: isoOrNull(t.firstNoticeAt)!, lastNoticeAt: isoOrNull(t.lastNoticeAt)!, notices: t.notices, recoveredAt: isoOrNull(t.recoveredAt) }];
    }),
    timeline: parts.timeline.map((r) => ({ ...r, minute: isoOrNull(r.minute)! })),
    earlyRetries: parts.earlyRetries,
    notes: parts.notes.map((n) => ({ ...n, at: isoOrNull(n.at)! })),
    serverTime: new Date(now).toISOString(),
  };
}
