import { writeTransaction } from "./client";
import { rollupRows } from "./rollups";
import { countedThrough, subtractUsage } from "./sources";
import * as postgres from "./postgres/retention";
import type { PruneCursor, PruneStep } from "./records/retention";
import { statement } from "./statement";
import { onEitherStore } from "./store";

export { PRUNE_START, type PruneCursor, type PruneStep } from "./records/retention";

/**
 * Retention: raw events (payloads, normalized rows and their idempotency keys) older than the
 * retention period go; threads, turns, episodes, attempts, directives and the audit log stay, so
 * insights keep their history. A thread's events go only once the thread itself has been quiet
 * for the whole period: a late event replays the thread from its stored events, which must then
 * still be complete. Events that belong to no thread go by age alone.
 */

/**
 * Rows examined in the order of their event time, through its index (no index on receive time
 * costs every insert): only events dated before the cutoff are ever read, and a row older by its
 * date but received later (an import) is kept until it too is old.
 */
const CANDIDATES = `SELECT e.id, e.at, e.receivedAt, e.threadId, t.updatedAt AS threadUpdatedAt
  FROM "Event" e LEFT JOIN "Thread" t ON t.id = e.threadId
  WHERE e.at < @cutoff AND (e.at, e.id) > (@at, @id) ORDER BY e.at, e.id LIMIT @limit`;
const DELETE_KEYS = `DELETE FROM "IngestKey" WHERE eventId IN (SELECT value FROM json_each(?))`;
// A pruned row can no longer absorb progress: the next progress line starts a new row.
const FORGET_OPEN_PROGRESS = `UPDATE "Thread" SET openProgressEventId = NULL WHERE openProgressEventId IN (SELECT value FROM json_each(?))`;
const DELETE_EVENTS = `DELETE FROM "Event" WHERE id IN (SELECT value FROM json_each(?))`;

interface Candidate {
  id: number;
  at: number;
  receivedAt: number;
  threadId: number | null;
  threadUpdatedAt: number | null;
}

/**
 * One small unit of work: examines up to `limit` events dated before `cutoff` (epoch ms), after
 * `after`, and deletes those received before it whose thread is quiet since before it.
 */
function prune(cutoff: number, after: PruneCursor, limit: number): Promise<PruneStep> {
  return writeTransaction((): PruneStep => {
    const rows = statement(CANDIDATES).all({ cutoff, at: after.at, id: after.id, limit }) as Candidate[];
    // Only events already counted in their source's usage, so the subtraction below is exact.
    const counted = countedThrough();
    const ids = rows
      .filter((row) => row.id <= counted && row.receivedAt < cutoff && (row.threadId === null || (row.threadUpdatedAt ?? 0) < cutoff))
      .map((row) => row.id);
    if (ids.length) {
      const list = JSON.stringify(ids);
      subtractUsage(list);
      rollupRows.removeNoticeFacts(list);
      statement(DELETE_KEYS).run(list);
      statement(FORGET_OPEN_PROGRESS).run(list);
      statement(DELETE_EVENTS).run(list);
    }
    const last = rows[rows.length - 1];
    return { pruned: ids.length, after: rows.length < limit ? null : { at: last.at, id: last.id } };
  });
}

export const { pruneEvents } = onEitherStore({ pruneEvents: prune }, postgres);
