import type pg from "pg";
import type { ThreadState } from "@/lib/retry";
import { labelsKey } from "../records/rollups";
import { newStored, threadProjection, toStored, type StoredThread, type ThreadRow } from "../records/thread-state";
import { lockThreadKey } from "./locks";
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
const CHILDREN = `SELECT id FROM "Thread" WHERE "sourceId" = $1 AND "parentExternalId" = $2 ORDER BY id`;
const OF_SOURCE = `SELECT id FROM "Thread" WHERE "sourceId" = $1 ORDER BY id`;
const SET_ARCHIVED = `UPDATE "Thread" SET "archivedAt" = ${timestampFromMs("$1")} WHERE id = $2`;
const SET_SNOOZED = `UPDATE "Thread" SET "snoozedUntil" = ${timestampFromMs("$1")} WHERE id = $2`;

export function threadRowsOn(client: pg.ClientBase, rollups: RollupRowsOn) {
  return {
    async findThread(sourceId: string, externalId: string): Promise<StoredThread | null> {
      await lockThreadKey(client, sourceId, externalId);
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
