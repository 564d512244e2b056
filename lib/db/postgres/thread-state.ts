import type pg from "pg";
import { arrayLiteral, type ArrayElement } from "./array-literal";
import type { ThreadState } from "@/lib/retry";
import { labelsKey } from "../records/rollups";
import { newStored, threadProjection, toStored, type StoredThread, type ThreadRow } from "../records/thread-state";
import { type TxLocks, txLocks } from "./locks";
import type { RollupRowsOn } from "./rollups";
import { pool } from "./pool";
import { msFromTimestamp, timestampFromMs } from "./time";

/** lib/db/thread-state.ts's unit-of-work statements on PostgreSQL; a thread read to be changed is locked (locks.ts). */

const COLUMNS = `id, "externalId", state, "initialSettings", "openProgressEventId", provider, model, agent, "joinedTo"`;
const FIND = `SELECT ${COLUMNS} FROM "Thread" WHERE "sourceId" = $1 AND "externalId" = $2 FOR UPDATE`;
const BY_ID = `SELECT "sourceId", ${COLUMNS} FROM "Thread" WHERE id = $1 FOR UPDATE`;
const INSERT = `INSERT INTO "Thread" ("sourceId", "externalId", status, state, "initialSettings", "createdAt", "updatedAt")
  VALUES ($1, $2, 'idle', $3, $4, ${timestampFromMs("$5")}, ${timestampFromMs("$5")}) RETURNING id`;
/** Columns of the projection written as times (epoch ms in, TIMESTAMP(3) stored). */
const TIMES = new Set(["nextAttemptAt", "deadlineAt", "resetAt", "wakeAt", "lastEventAt", "updatedAt"]);
const SAVED = [
  "parentExternalId", "title", "agent", "provider", "model", "policy", "status", "turnId", "retryKind", "retryAttempt", "retryMaxAttempts",
  "nextAttemptAt", "nextAttemptEstimated", "deadlineAt", "resetAt", "advisedDelayMs", "lastErrorKind", "lastErrorHttpStatus", "lastErrorCode",
  "lastErrorMessage", "wakeAt", "state", "lastEventAt", "openProgressEventId", "updatedAt",
] as const;
const SAVE = `UPDATE "Thread" SET ${SAVED.map((column, i) => `"${column}" = ${TIMES.has(column) ? timestampFromMs(`$${i + 2}`) : `$${i + 2}`}`).join(", ")} WHERE id = $1`;
/** The array type each saved column travels in when many threads are saved in one statement. */
const INTEGERS = new Set(["retryAttempt", "retryMaxAttempts", "advisedDelayMs", "lastErrorHttpStatus"]);
const arrayType = (column: string) =>
  TIMES.has(column) ? "float8" : INTEGERS.has(column) ? "int" : column === "openProgressEventId" ? "bigint" : column === "nextAttemptEstimated" ? "boolean" : "text";
const SAVE_MANY = `UPDATE "Thread" t SET ${SAVED.map((column) => `"${column}" = ${TIMES.has(column) ? timestampFromMs(`r."${column}"`) : `r."${column}"`}`).join(", ")}
  FROM unnest($1::int[], ${SAVED.map((column, i) => `$${i + 2}::${arrayType(column)}[]`).join(", ")}) AS r(id, ${SAVED.map((column) => `"${column}"`).join(", ")})
  WHERE t.id = r.id`;
// A batch's threads named ahead (expectThreads): found and locked together, in id order.
const EXPECTED = `SELECT ${COLUMNS} FROM "Thread" WHERE "sourceId" = $1 AND "externalId" = ANY($2::text[]) ORDER BY id FOR UPDATE`;
// Which of them another source's path may join (thread-join.ts): every join needs such a thread.
const ON_OTHER_PATHS = `SELECT DISTINCT "externalId" FROM "Thread" WHERE "externalId" = ANY($1::text[]) AND "sourceId" <> $2 AND "joinedTo" IS NULL`;
const THREAD_IDS = `SELECT nextval(pg_get_serial_sequence('"Thread"', 'id'))::int AS id FROM generate_series(1, $1)`;
const INSERT_MANY = `INSERT INTO "Thread" (id, "sourceId", "externalId", status, state, "initialSettings", "createdAt", "updatedAt")
  SELECT r.id, r."sourceId", r."externalId", 'idle', r.state, r."initialSettings", ${timestampFromMs("r.at")}, ${timestampFromMs("r.at")}
  FROM unnest($1::int[], $2::text[], $3::text[], $4::text[], $5::text[], $6::float8[]) AS r(id, "sourceId", "externalId", state, "initialSettings", at)`;
const CHILDREN = `SELECT id FROM "Thread" WHERE "sourceId" = $1 AND "parentExternalId" = $2 ORDER BY id`;
const OF_SOURCE = `SELECT id FROM "Thread" WHERE "sourceId" = $1 ORDER BY id`;
const SET_ARCHIVED = `UPDATE "Thread" SET "archivedAt" = ${timestampFromMs("$1")} WHERE id = $2`;
const SET_SNOOZED = `UPDATE "Thread" SET "snoozedUntil" = ${timestampFromMs("$1")} WHERE id = $2`;

/**
 * What a unit of work learnt of the threads it named ahead (expectThreads), and the creations it
 * holds: a batch of 500 events on 25 new threads then costs four statements instead of 75.
 * - `expected`: each named thread as it was read (locked), or null when none exists; answered by
 *   findThread once, after which the pipeline keeps the thread itself. Nothing else changes a
 *   named row meanwhile: the row is locked by this unit of work, a missing key is covered by its
 *   source's lock (locks.ts), and this unit of work changes a thread only after finding it.
 * - `alone`: named threads no other source's thread shares an id with, which no path can join.
 * - creations draw their ids ahead and are written in one statement before anything that may
 *   name them (events, saves: unit-of-work.ts flushes them first).
 */
export function threadLookahead() {
  return { expected: new Map<string, StoredThread | null>(), alone: new Set<string>(), ids: [] as number[] };
}
export type ThreadLookahead = ReturnType<typeof threadLookahead>;
export const lookaheadKey = (sourceId: string, externalId: string) => `${sourceId}\0${externalId}`;

export function threadRowsOn(client: pg.ClientBase, rollups: RollupRowsOn, locks: TxLocks = txLocks(client), ahead: ThreadLookahead = threadLookahead()) {
  type Creation = { id: number; sourceId: string; externalId: string; state: string; initialSettings: string; at: number };
  let creations: Creation[] = [];

  async function flushCreations(): Promise<void> {
    if (!creations.length) return;
    const rows = creations;
    creations = [];
    await client.query(INSERT_MANY, [rows.map((r) => r.id), rows.map((r) => r.sourceId), rows.map((r) => r.externalId), rows.map((r) => r.state), rows.map((r) => r.initialSettings), rows.map((r) => r.at)]);
  }

  return {
    flushCreations,

    /** lib/db/thread-state.ts's contract: the threads a unit of work is about to find or create. */
    async expectThreads(sourceId: string, externalIds: string[]): Promise<void> {
      const named = externalIds.filter((id) => !ahead.expected.has(lookaheadKey(sourceId, id)));
      if (!named.length) return;
      await locks.source(sourceId);
      const { rows } = await client.query<ThreadRow>(EXPECTED, [sourceId, named]);
      const found = new Map(rows.map((row) => [row.externalId, row]));
      for (const id of named) {
        const row = found.get(id);
        ahead.expected.set(lookaheadKey(sourceId, id), row ? toStored(row) : null);
      }
      const shared = new Set((await client.query<{ externalId: string }>(ON_OTHER_PATHS, [named, sourceId])).rows.map((row) => row.externalId));
      for (const id of named) if (!shared.has(id)) ahead.alone.add(lookaheadKey(sourceId, id));
      const missing = named.length - found.size;
      if (missing > 0) ahead.ids.push(...(await client.query<{ id: number }>(THREAD_IDS, [missing])).rows.map((row) => row.id));
    },

    async findThread(sourceId: string, externalId: string): Promise<StoredThread | null> {
      const key = lookaheadKey(sourceId, externalId);
      if (ahead.expected.has(key)) {
        const known = ahead.expected.get(key)!;
        ahead.expected.delete(key);
        return known;
      }
      // A thread that does not exist yet has no row to lock: its source's lock covers its key (locks.ts).
      await locks.source(sourceId);
      await flushCreations();
      const { rows } = await client.query<ThreadRow>(FIND, [sourceId, externalId]);
      return rows[0] ? toStored(rows[0]) : null;
    },

    async threadById(id: number): Promise<(StoredThread & { sourceId: string }) | null> {
      const { rows } = await client.query<ThreadRow & { sourceId: string }>(BY_ID, [id]);
      return rows[0] ? { ...toStored(rows[0]), sourceId: rows[0].sourceId } : null;
    },

    async setArchived(id: number, at: number | null): Promise<void> {
      await client.query(SET_ARCHIVED, [at, id]);
    },

    async setSnoozed(id: number, until: number | null): Promise<void> {
      await client.query(SET_SNOOZED, [until, id]);
    },

    /** Called after findThread found none, under its lock on the key; held when its id was drawn ahead. */
    async createThread(sourceId: string, externalId: string, state: ThreadState, now: number): Promise<StoredThread> {
      const id = ahead.ids.shift();
      if (id !== undefined) {
        creations.push({ id, sourceId, externalId, state: JSON.stringify(state), initialSettings: JSON.stringify(state.settings), at: now });
        return newStored(id, externalId, state);
      }
      const { rows } = await client.query<{ id: number }>(INSERT, [sourceId, externalId, JSON.stringify(state), JSON.stringify(state.settings), now]);
      return newStored(rows[0].id, externalId, state);
    },

    /** As on SQLite: a change of labels moves the thread's stored facts with it. */
    async saveThread(thread: StoredThread, now: number): Promise<void> {
      const labels = labelsKey(thread.state);
      const moved = thread.labels !== null && thread.labels !== labels;
      if (moved) await rollups.threadFacts(thread.id, -1);
      const projection = threadProjection(thread, now);
      await client.query(SAVE, [thread.id, ...SAVED.map((column) => projection[column])]);
      if (moved) await rollups.threadFacts(thread.id, 1);
      thread.labels = labels;
    },

    async childThreadIds(sourceId: string, parentExternalId: string): Promise<number[]> {
      return (await client.query<{ id: number }>(CHILDREN, [sourceId, parentExternalId])).rows.map((row) => row.id);
    },

    async threadIdsOfSource(sourceId: string): Promise<number[]> {
      return (await client.query<{ id: number }>(OF_SOURCE, [sourceId])).rows.map((row) => row.id);
    },
  };
}

export type HeldThreadSaves = ReturnType<typeof heldThreadSavesOn>;

/**
 * Thread saves of a unit of work held back and written in one statement, with the rollup notices
 * counted under their labels (rollups.ts noticesSeen) once they are written: the unit of work
 * flushes them before anything else reads threads, as it does the events (unit-of-work.ts). A
 * save that moves the thread's rollup facts (a change of labels) is not held: it writes what is
 * held, then itself, as `threadRowsOn` does; so every notice held here is counted under the
 * labels its thread had when it was seen.
 */
export function heldThreadSavesOn(client: pg.ClientBase, rows: ReturnType<typeof threadRowsOn>, rollups: RollupRowsOn) {
  const held = new Map<number, ReturnType<typeof threadProjection>>();
  let notices: [threadId: number, kinds: readonly string[]][] = [];

  async function flush(): Promise<void> {
    // A save of a thread whose creation is still held would update no row.
    await rows.flushCreations();
    if (held.size) {
      const saves = [...held.values()];
      held.clear();
      await client.query(SAVE_MANY, [saves.map((save) => save.id), ...SAVED.map((column) => saves.map((save) => save[column] as ArrayElement))].map(arrayLiteral));
    }
    if (notices.length) {
      const seen = notices;
      notices = [];
      await rollups.noticesSeenOf(seen);
    }
  }

  return {
    flush,
    async saveThread(thread: StoredThread, now: number): Promise<void> {
      const labels = labelsKey(thread.state);
      if (thread.labels !== null && thread.labels !== labels) {
        await flush();
        return rows.saveThread(thread, now);
      }
      // Saved again: the later save stands, as one UPDATE after the other would leave it.
      held.set(thread.id, threadProjection(thread, now));
      thread.labels = labels;
    },
    /** Held with its thread's save (the labels it is counted under are the saved ones); counted at once otherwise. */
    async noticesSeen(threadId: number, kinds: readonly string[]): Promise<void> {
      if (!held.has(threadId)) {
        await flush();
        return rollups.noticesSeen(threadId, kinds);
      }
      if (kinds.length) notices.push([threadId, kinds]);
    },
  };
}

const DUE = `SELECT id FROM "Thread" WHERE "wakeAt" IS NOT NULL AND "wakeAt" <= ${timestampFromMs("$1")} ORDER BY "wakeAt" LIMIT $2`;
const NEXT_WAKE = `SELECT ${msFromTimestamp(`min("wakeAt")`)} AS at FROM "Thread" WHERE "wakeAt" IS NOT NULL`;

/** lib/db/thread-state.ts's watchdog pass: threads whose wake time has come, earliest first. */
export async function dueThreadIds(now: number, limit = 200): Promise<number[]> {
  const { rows } = await pool().query<{ id: number }>(DUE, [now, limit]);
  return rows.map((row) => row.id);
}

export async function nextWakeAt(): Promise<number | null> {
  const { rows } = await pool().query<{ at: number | null }>(NEXT_WAKE);
  return rows[0]?.at ?? null;
}
