import type { PruneCursor, PruneStep } from "../records/retention";
import { inTransaction } from "./pool";
import { rollupRowsOn } from "./rollups";
import { msFromTimestamp, timestampFromMs } from "./time";

/**
 * lib/db/retention.ts's pruneEvents on PostgreSQL: the same rule (see there). Another instance may
 * be stepping a candidate's thread: the threads are locked (in id order) and their quiet time read
 * under the lock, so an event arriving now keeps its thread's history whole.
 */

const CANDIDATES = `SELECT id, ${msFromTimestamp("at")} AS at, ${msFromTimestamp(`"receivedAt"`)} AS "receivedAt", "threadId"
  FROM "Event" WHERE at < ${timestampFromMs("$1")} AND (at, id) > (${timestampFromMs("$2")}, $3::bigint) ORDER BY at, id LIMIT $4`;
/** The year 1: the cursor's start (before every event) as a time PostgreSQL can hold. */
const EARLIEST = -62_135_596_800_000;
const LOCK_THREADS = `SELECT id, ${msFromTimestamp(`"updatedAt"`)} AS "updatedAt" FROM "Thread" WHERE id = ANY($1::int[]) ORDER BY id FOR UPDATE`;
const COUNTED_THROUGH = `SELECT coalesce((SELECT "countedThrough" FROM "UsageTally" WHERE id = 1), 0) AS "countedThrough"`;
const SUBTRACT_USAGE = `UPDATE "SourceUsage" u SET events = GREATEST(0, u.events - c.events), bytes = GREATEST(0, u.bytes - c.bytes)
  FROM (SELECT "sourceId", count(*) AS events, sum(octet_length(raw) + octet_length(normalized)) AS bytes FROM "Event" WHERE id = ANY($1::bigint[]) GROUP BY "sourceId") c
  WHERE u."sourceId" = c."sourceId"`;
const DELETE_KEYS = `DELETE FROM "IngestKey" WHERE "eventId" = ANY($1::bigint[])`;
const FORGET_OPEN_PROGRESS = `UPDATE "Thread" SET "openProgressEventId" = NULL WHERE "openProgressEventId" = ANY($1::bigint[])`;
const DELETE_EVENTS = `DELETE FROM "Event" WHERE id = ANY($1::bigint[])`;

interface Candidate {
  id: number;
  at: number;
  receivedAt: number;
  threadId: number | null;
}

export async function pruneEvents(cutoff: number, after: PruneCursor, limit: number): Promise<PruneStep> {
  return inTransaction(async (client) => {
    const { rows } = await client.query<Candidate>(CANDIDATES, [cutoff, Math.max(after.at, EARLIEST), after.id, limit]);
    const threadIds = [...new Set(rows.flatMap((row) => (row.threadId === null ? [] : [row.threadId])))];
    const updatedAt = new Map((await client.query<{ id: number; updatedAt: number }>(LOCK_THREADS, [threadIds])).rows.map((t) => [t.id, t.updatedAt]));
    // Only events already counted in their source's usage, so the subtraction below is exact.
    const counted = (await client.query<{ countedThrough: number }>(COUNTED_THROUGH)).rows[0].countedThrough;
    const ids = rows
      .filter((row) => row.id <= counted && row.receivedAt < cutoff && (row.threadId === null || (updatedAt.get(row.threadId) ?? 0) < cutoff))
      .map((row) => row.id);
    if (ids.length) {
      await client.query(SUBTRACT_USAGE, [ids]);
      const rollups = rollupRowsOn(client);
      await rollups.removeNoticeFacts(ids);
      await rollups.flush();
      await client.query(DELETE_KEYS, [ids]);
      await client.query(FORGET_OPEN_PROGRESS, [ids]);
      await client.query(DELETE_EVENTS, [ids]);
    }
    const last = rows[rows.length - 1];
    return { pruned: ids.length, after: rows.length < limit ? null : { at: last.at, id: last.id } };
  });
}
