import type { IncidentRecord, IncidentThread } from "@/lib/retry";

/** Incidents as both stores' statements answer them (lib/db/incidents.ts, lib/db/postgres/incidents.ts). */

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
