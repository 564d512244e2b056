import type pg from "pg";
import { arrayLiteral, type ArrayElement } from "./array-literal";
import { keyLookups } from "@/lib/ingest/key";
import type { RadarEvent } from "@/lib/retry";
import { eventColumns, foldedProgress, toRadarEvent, type EventRow } from "../records/events";
import { type TxLocks, txLocks } from "./locks";
import { timestampFromMs } from "./time";

/**
 * lib/db/events.ts's unit-of-work statements on PostgreSQL. Events are the hot path: a batch's
 * rows are not inserted one statement each but held back and written with one multi-row INSERT
 * (arrays unnested) when the unit of work next uses the database for anything else, or commits
 * (lib/db/postgres/unit-of-work.ts flushes). Their ids are drawn from the table's sequence ahead,
 * as many as the batch's new keys not stored yet, so `insertEvent` still answers the event's
 * sequence at once. A key folded into a progress row needs no id; one drawn before the fold is
 * left unused, a gap in the ids (as a rollback leaves on PostgreSQL anyway): only their order
 * means anything.
 */

// One probe of each unique index per key, whatever the statistics say: written as EXISTS, the
// planner may hash all of a source's keys instead (a scan of its every event, each batch).
export const KEYS_STORED = `SELECT k FROM unnest($2::text[]) k CROSS JOIN LATERAL (SELECT 1 FROM "Event" WHERE "sourceId" = $1 AND "idempotencyKey" = k LIMIT 1) stored
  UNION ALL SELECT k FROM unnest($2::text[]) k CROSS JOIN LATERAL (SELECT 1 FROM "IngestKey" WHERE "sourceId" = $1 AND key = k LIMIT 1) stored`;
const NEXT_IDS = `SELECT nextval(pg_get_serial_sequence('"Event"', 'id')) AS id FROM generate_series(1, $1)`;
// Times travel as float8 (a source may report fractions of a millisecond) and are rounded to whole ones.
const INSERT_EVENTS = `INSERT INTO "Event" (id, "sourceId", "threadId", "idempotencyKey", format, "nativeType", type, at, "receivedAt", "lastAt",
    count, "turnId", attempt, "maxAttempts", "delayMs", kind, "httpStatus", code, message, late, raw, normalized)
  SELECT id, "sourceId", "threadId", "idempotencyKey", format, "nativeType", type, ${timestampFromMs("at")}, ${timestampFromMs(`"receivedAt"`)},
    ${timestampFromMs(`"lastAt"`)}, count, "turnId", attempt, "maxAttempts", "delayMs", kind, "httpStatus", code, message, false, raw, normalized
  FROM unnest($1::bigint[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::text[], $8::float8[], $9::float8[], $10::float8[],
    $11::int[], $12::text[], $13::int[], $14::int[], $15::int[], $16::text[], $17::int[], $18::text[], $19::text[], $20::text[], $21::text[])
    AS r(id, "sourceId", "threadId", "idempotencyKey", format, "nativeType", type, at, "receivedAt", "lastAt",
      count, "turnId", attempt, "maxAttempts", "delayMs", kind, "httpStatus", code, message, raw, normalized)`;
const FOLD_PROGRESS = `UPDATE "Event" SET count = count + $1, "lastAt" = GREATEST(coalesce("lastAt", at), ${timestampFromMs("$2")}), normalized = $3 WHERE id = $4`;
const EVENT_NORMALIZED = `SELECT normalized FROM "Event" WHERE id = $1`;
const INSERT_KEY = `INSERT INTO "IngestKey" ("sourceId", key, "eventId") VALUES ($1, $2, $3)`;
const MARK_LATE = `UPDATE "Event" SET late = $1 WHERE id = $2`;
const THREAD_EVENTS = `SELECT id, normalized FROM "Event" WHERE "threadId" = $1 ORDER BY at, id`;

/** Columns in the order of INSERT_EVENTS's arrays. */
const COLUMNS = ["id", "sourceId", "threadId", "idempotencyKey", "format", "nativeType", "type", "at", "receivedAt", "lastAt", "count", "turnId", "attempt", "maxAttempts", "delayMs", "kind", "httpStatus", "code", "message", "raw", "normalized"] as const;

/** The event statements of one unit of work on `client`; `flush` writes the rows held back. */
export function eventRowsOn(client: pg.ClientBase, locks: TxLocks = txLocks(client)) {
  let held: Record<(typeof COLUMNS)[number], unknown>[] = [];
  let ids: number[] = [];
  /** New keys the batch announced (storedKeys) not inserted yet: how many ids to draw at once. */
  let expected = 0;

  async function nextId(): Promise<number> {
    if (!ids.length) {
      const { rows } = await client.query<{ id: number }>(NEXT_IDS, [Math.max(1, expected)]);
      ids = rows.map((row) => row.id).sort((a, b) => a - b);
    }
    expected = Math.max(0, expected - 1);
    return ids.shift()!;
  }

  const rows = {
    async storedKeys(sourceId: string, keys: string[]): Promise<Set<string>> {
      if (keys.length === 0) return new Set();
      // Keys are checked under the source's lock, held to the commit: another instance's batch of
      // this source waits here, then finds the keys this one stored (see locks.ts).
      await locks.source(sourceId);
      const { lookup, stored: storedOf } = keyLookups(keys);
      const { rows: found } = await client.query<{ k: string }>(KEYS_STORED, [sourceId, lookup]);
      const stored = storedOf(found.map((row) => row.k));
      expected += new Set(keys).size - stored.size;
      return stored;
    },

    async insertEvent(row: EventRow): Promise<number> {
      const id = await nextId();
      held.push({ id, sourceId: row.sourceId, threadId: row.threadId, idempotencyKey: row.idempotencyKey, format: row.format, nativeType: row.nativeType, ...eventColumns(row) });
      return id;
    },

    async foldProgress(sourceId: string, eventId: number, key: string, count: number, at: number): Promise<void> {
      expected = Math.max(0, expected - 1);
      const { rows: found } = await client.query<{ normalized: string }>(EVENT_NORMALIZED, [eventId]);
      await client.query(FOLD_PROGRESS, [count, at, foldedProgress(found[0].normalized, count, at), eventId]);
      await client.query(INSERT_KEY, [sourceId, key, eventId]);
    },

    async markLate(eventId: number, late: boolean): Promise<void> {
      await client.query(MARK_LATE, [late, eventId]);
    },

    async threadEvents(threadId: number): Promise<RadarEvent[]> {
      const { rows: found } = await client.query<{ id: number; normalized: string }>(THREAD_EVENTS, [threadId]);
      return found.map(toRadarEvent);
    },
  };

  /** Writes the rows held back, in one statement. */
  async function flush(): Promise<void> {
    if (!held.length) return;
    const batch = held;
    held = [];
    // Literals written here: node-postgres's own escaping of 500 payloads was the batch's costliest JavaScript.
    await client.query(INSERT_EVENTS, COLUMNS.map((column) => arrayLiteral(batch.map((row) => row[column] as ArrayElement))));
  }

  /** Whether every row held back is of `sourceId` (none held counts). */
  const holdsOnly = (sourceId: string) => held.every((row) => row.sourceId === sourceId);

  return { rows, flush, holdsOnly };
}
