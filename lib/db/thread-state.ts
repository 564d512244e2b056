import type { ThreadState } from "@/lib/retry";
import { labelsKey } from "./records/rollups";
import { newStored, threadProjection, toStored, type StoredThread, type ThreadRow } from "./records/thread-state";
import { rollupRows } from "./rollups";
import { pluck, statement } from "./statement";
import { serialized } from "./client";
import * as postgres from "./postgres/thread-state";
import { onEitherStore } from "./store";

export { parseState, type StoredThread } from "./records/thread-state";

/**
 * The engine's side of a thread: its stored ThreadState, the columns projected from it for the
 * readers (board, insights, exports), and its wake time for the watchdog.
 */

const COLUMNS = `id, externalId, state, initialSettings, openProgressEventId, provider, model, agent, joinedTo`;
const FIND = `SELECT ${COLUMNS} FROM "Thread" WHERE sourceId = ? AND externalId = ?`;
const BY_ID = `SELECT sourceId, ${COLUMNS} FROM "Thread" WHERE id = ?`;
const INSERT = `INSERT INTO "Thread" (sourceId, externalId, status, state, initialSettings, createdAt, updatedAt) VALUES (?, ?, 'idle', ?, ?, ?, ?)`;
const SAVE = `UPDATE "Thread" SET parentExternalId = @parentExternalId, title = @title, agent = @agent, provider = @provider,
    model = @model, policy = @policy, status = @status, turnId = @turnId, retryKind = @retryKind,
    retryAttempt = @retryAttempt, retryMaxAttempts = @retryMaxAttempts, nextAttemptAt = @nextAttemptAt,
    nextAttemptEstimated = @nextAttemptEstimated, deadlineAt = @deadlineAt, resetAt = @resetAt,
    advisedDelayMs = @advisedDelayMs, lastErrorKind = @lastErrorKind, lastErrorHttpStatus = @lastErrorHttpStatus,
    lastErrorCode = @lastErrorCode, lastErrorMessage = @lastErrorMessage, wakeAt = @wakeAt, state = @state,
    lastEventAt = @lastEventAt, openProgressEventId = @openProgressEventId, updatedAt = @updatedAt
  WHERE id = @id`;
const CHILDREN = `SELECT id FROM "Thread" WHERE sourceId = ? AND parentExternalId = ?`;
const OF_SOURCE = `SELECT id FROM "Thread" WHERE sourceId = ?`;
const DUE = `SELECT id FROM "Thread" WHERE wakeAt IS NOT NULL AND wakeAt <= ? ORDER BY wakeAt LIMIT ?`;
const NEXT_WAKE = `SELECT min(wakeAt) FROM "Thread" WHERE wakeAt IS NOT NULL`;
const SET_ARCHIVED = `UPDATE "Thread" SET archivedAt = ? WHERE id = ?`;
const SET_SNOOZED = `UPDATE "Thread" SET snoozedUntil = ? WHERE id = ?`;

function threadById(id: number): (StoredThread & { sourceId: string }) | null {
  const row = statement(BY_ID).get(id) as (ThreadRow & { sourceId: string }) | undefined;
  return row ? { ...toStored(row), sourceId: row.sourceId } : null;
}

/** The stored-thread statements of a unit of work (see unit-of-work.ts); synchronous on SQLite. */
export const threadRows = {
  findThread(sourceId: string, externalId: string): StoredThread | null {
    const row = statement(FIND).get(sourceId, externalId) as ThreadRow | undefined;
    return row ? toStored(row) : null;
  },

  threadById,


  setArchived(id: number, at: number | null): void {
    statement(SET_ARCHIVED).run(at, id);
  },

  setSnoozed(id: number, until: number | null): void {
    statement(SET_SNOOZED).run(until, id);
  },

  /**
   * Names the threads a unit of work is about to find or create (an ingest batch's), so a store
   * that pays a round trip per statement can read and create them together
   * (lib/db/postgres/thread-state.ts). SQLite finds each in microseconds: nothing to do here.
   */
  expectThreads(_sourceId: string, _externalIds: string[]): void {},

  createThread(sourceId: string, externalId: string, state: ThreadState, now: number): StoredThread {
    const info = statement(INSERT).run(sourceId, externalId, JSON.stringify(state), JSON.stringify(state.settings), now, now);
    return newStored(Number(info.lastInsertRowid), externalId, state);
  },

  /**
   * Writes the thread's projection and state. Facts are rolled up under their thread's labels:
   * when those change, the thread's stored facts move with them (a new thread has none to move).
   * The labels saved are recorded on `thread`.
   */
  saveThread(thread: StoredThread, now: number): void {
    const labels = labelsKey(thread.state);
    const moved = thread.labels !== null && thread.labels !== labels;
    if (moved) rollupRows.threadFacts(thread.id, -1);
    const projection = threadProjection(thread, now);
    statement(SAVE).run({ ...projection, nextAttemptEstimated: projection.nextAttemptEstimated ? 1 : 0 });
    if (moved) rollupRows.threadFacts(thread.id, 1);
    thread.labels = labels;
  },

  /** Threads whose stored parent is this one (the caller checks their current state). */
  childThreadIds(sourceId: string, parentExternalId: string): number[] {
    return pluck(CHILDREN).all(sourceId, parentExternalId) as number[];
  },

  threadIdsOfSource(sourceId: string): number[] {
    return pluck(OF_SOURCE).all(sourceId) as number[];
  },
};

const sqlite = {
  /** Threads whose wake time has come, earliest first (the watchdog's pass). */
  dueThreadIds(now: number, limit = 200): Promise<number[]> {
    return serialized(() => pluck(DUE).all(now, limit) as number[]);
  },

  nextWakeAt(): Promise<number | null> {
    return serialized(() => (pluck(NEXT_WAKE).get() as number | null) ?? null);
  },
};

export const { dueThreadIds, nextWakeAt } = onEitherStore(sqlite, postgres);
