import type pg from "pg";
import type { ThreadState } from "@/lib/retry";
import { labelsKey } from "../records/rollups";
import { newStored, threadProjection, toStored, type StoredThread, type ThreadRow } from "../records/thread-state";
import { lockSource, type TxLocks, txLocks } from "./locks";
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
const CHILDREN = `SELECT id FROM "Thread" WHERE "sourceId" = $1 AND "parentExternalId" = $2 ORDER BY id`;
const OF_SOURCE = `SELECT id FROM "Thread" WHERE "sourceId" = $1 ORDER BY id`;
const SET_ARCHIVED = `UPDATE "Thread" SET "archivedAt" = ${timestampFromMs("$1")} WHERE id = $2`;
const SET_SNOOZED = `UPDATE "Thread" SET "snoozedUntil" = ${timestampFromMs("$1")} WHERE id = $2`;

export function threadRowsOn(client: pg.ClientBase, rollups: RollupRowsOn, locks: TxLocks = txLocks(client)) {
  return {
    async findThread(sourceId: string, externalId: string): Promise<StoredThread | null> {
      // A thread that does not exist yet has no row to lock: its source's lock covers its key (locks.ts).
      await locks.source(sourceId);
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

    /** Called after findThread found none, under its lock on the key. */
    async createThread(sourceId: string, externalId: string, state: ThreadState, now: number): Promise<StoredThread> {
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
    if (held.size) {
      const saves = [...held.values()];
      held.clear();
      await client.query(SAVE_MANY, [saves.map((save) => save.id), ...SAVED.map((column) => saves.map((save) => save[column]))]);
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
