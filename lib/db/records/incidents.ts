import { incidentTimeLostMs, type IncidentRecord, type IncidentThread } from "@/lib/retry";
import type { IncidentDetail, IncidentThreadView, IncidentView } from "@/lib/wire/types";
import { shared } from "@/lib/process-state";

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

/** An active incident as the unit of work reads it first: without its thread list, with the list's revision. */
export type ActiveIncidentRow = Omit<IncidentRecord, "threads"> & { revision: string };

/** An incident's thread list as stored: the JSON text and the revision it was saved under. */
export type StoredIncidentThreads = { id: string; revision: string; threads: string };

/**
 * The thread lists of the active incidents this process last read or saved, each with the
 * revision it was saved under (a fresh random id per save, in the row beside the list). Every commit
 * with a notice folds the active incidents, and an outage's incident holds thousands of threads:
 * reading and parsing its whole list each time cost 1.8 ms of a commit's 3.8 at 2,000 threads
 * (scripts/profile-incident.ts). A list is read again only when its revision is not the one known
 * here, whoever saved it: another instance, or a unit of work of this one that was rolled back
 * after its save was remembered. The lists handed out are shared between folds: never changed
 * (advanceIncidents copies what it changes). One for the process, whichever store it runs on
 * (lib/db/incidents.ts, lib/db/postgres/incidents.ts).
 */
class KnownIncidentThreads {
  readonly #known = new Map<string, { revision: string; threads: IncidentThread[] }>();

  /**
   * The incidents of `rows` whose list is not known at its revision: to read. A row without a
   * revision (saved before it, or by a writer that sets none) is never known: read each time.
   */
  unknown(rows: ActiveIncidentRow[]): string[] {
    return rows.filter((row) => row.revision === "" || this.#known.get(row.id)?.revision !== row.revision).map((row) => row.id);
  }

  /** Lists as read from the store (what `unknown` named), known from now on. */
  read(lists: StoredIncidentThreads[]): void {
    for (const { id, revision, threads } of lists) this.#known.set(id, { revision, threads: JSON.parse(threads) as IncidentThread[] });
  }

  /**
   * The revision to save `incident` under, its list known at it while the incident is active. Known
   * before the save lands: rolled back, the row keeps its former revision and the list is read again.
   */
  save(incident: IncidentRecord): string {
    const revision = crypto.randomUUID();
    if (incident.state === "closed") this.#known.delete(incident.id);
    else this.#known.set(incident.id, { revision, threads: incident.threads });
    return revision;
  }

  forget(id: string): void {
    this.#known.delete(id);
  }

  /**
   * The records of `rows` with their lists, every one known (read what `unknown` named first);
   * whatever is not in `rows` is forgotten: it is no longer active.
   */
  records(rows: ActiveIncidentRow[]): IncidentRecord[] {
    const active = new Set(rows.map((row) => row.id));
    for (const id of this.#known.keys()) if (!active.has(id)) this.#known.delete(id);
    return rows.map(({ revision: _revision, ...row }) => {
      const known = this.#known.get(row.id);
      if (!known) throw new Error(`incident ${row.id}: its thread list was not read`);
      return { ...row, threads: known.threads };
    });
  }
}

// Process-wide (lib/process-state.ts), as the writer queue is.
export const knownIncidentThreads = shared("knownIncidentThreads", (): KnownIncidentThreads => new KnownIncidentThreads());

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
