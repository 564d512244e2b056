import { OTLP_FORMAT, SERVER_FORMAT } from "@/lib/ingest/types";
import { rollupRows } from "./rollups";
import { pluck, statement } from "./statement";

/**
 * One agent thread reported by two paths. Threads stay keyed by (source, agent thread id), so a
 * relay and an OpenTelemetry exporter (usually two sources: two tokens) reporting the same Claude
 * session or Codex conversation make two threads. The relay's is the one that can be controlled
 * and sees every attempt, so the OpenTelemetry-only thread is joined to it (`joinedTo`):
 *
 * - readers skip joined threads (the board, counts, metrics, exports, insights:
 *   `notJoinedWhere` and `notJoinedSql` in thread-filter.ts), and the relay thread's page merges
 *   their events and names the path;
 * - a joined thread's facts leave the rollups in the unit of work that joins it, and every later
 *   fact of it is left out (rollups.ts reads only threads that are not joined), so an attempt both
 *   paths report counts once: the relay's;
 * - its retry notices feed no incident (pipeline.ts).
 *
 * The join is made by whichever path arrives second: an OpenTelemetry batch finds the relay
 * thread, or a relay batch finds the OpenTelemetry threads. A thread that ever got a line from
 * another path than OpenTelemetry (same source for both) is not OpenTelemetry-only and is never
 * joined: it already has both paths' facts in one place. "Relay" here is any path but
 * OpenTelemetry (the relay, the ingest API, an import): what can carry a stop back is decided by
 * the source (lib/threads/control.ts), not here.
 */

const REPORTED_BY_RELAY = (t: string) =>
  `EXISTS (SELECT 1 FROM "Event" e WHERE e.threadId = ${t}.id AND e.format NOT IN ('${OTLP_FORMAT}', '${SERVER_FORMAT}'))`;

const RELAY_THREAD = `SELECT t.id FROM "Thread" t WHERE t.externalId = @externalId AND t.sourceId <> @sourceId AND t.joinedTo IS NULL
  AND ${REPORTED_BY_RELAY("t")} ORDER BY t.id LIMIT 1`;
const OTLP_THREADS = `SELECT t.id FROM "Thread" t WHERE t.externalId = @externalId AND t.sourceId <> @sourceId AND t.joinedTo IS NULL
  AND NOT ${REPORTED_BY_RELAY("t")} ORDER BY t.id`;
const SELF_BY_RELAY = `SELECT ${REPORTED_BY_RELAY("t")} FROM "Thread" t WHERE t.id = ?`;
const JOIN = `UPDATE "Thread" SET joinedTo = ? WHERE id = ?`;

function join(threadId: number, relayThreadId: number): void {
  // Its facts so far leave the rollups now; later ones are never added (rollups.ts).
  rollupRows.threadFacts(threadId, -1);
  statement(JOIN).run(relayThreadId, threadId);
}

/** The join statements of a unit of work (see unit-of-work.ts). */
export const threadJoinRows = {
  /**
   * A line of `format` is about to be applied to this thread: joins what the paths make one.
   * Returns the thread's own `joinedTo` and the threads a join made now changed (both sides).
   * `thread.joinedTo` is the stored one, read with the thread.
   */
  joinPaths(thread: { id: number; sourceId: string; externalId: string; joinedTo: number | null }, format: string): { joinedTo: number | null; changed: number[] } {
    const current = thread.joinedTo;
    if (current !== null || format === SERVER_FORMAT) return { joinedTo: current, changed: [] };
    const where = { externalId: thread.externalId, sourceId: thread.sourceId };
    if (format === OTLP_FORMAT) {
      if (pluck(SELF_BY_RELAY).get(thread.id)) return { joinedTo: null, changed: [] };
      const relay = pluck(RELAY_THREAD).get(where) as number | undefined;
      if (relay === undefined) return { joinedTo: null, changed: [] };
      join(thread.id, relay);
      return { joinedTo: relay, changed: [thread.id, relay] };
    }
    const joined = pluck(OTLP_THREADS).all(where) as number[];
    for (const id of joined) join(id, thread.id);
    return { joinedTo: null, changed: joined.length ? [thread.id, ...joined] : [] };
  },
};
