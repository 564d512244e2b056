import type { ThreadSettings, ThreadState } from "@/lib/retry";
import { labelsKey, rollupRows } from "./rollups";
import { pluck, statement } from "./statement";
import { serialized } from "./client";

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

export interface StoredThread {
  id: number;
  externalId: string;
  state: ThreadState;
  /** What a replay starts from: the settings the thread was created with. */
  initialSettings: ThreadSettings;
  openProgressEventId: number | null;
  /**
   * The labels its rollup facts are stored under (labelsKey), as last saved; null for a thread
   * created in this unit of work, which has no facts yet: it takes its labels at its first save.
   */
  labels: string | null;
  /** The thread of another path this one is joined to (thread-join.ts), as stored. */
  joinedTo: number | null;
}

interface ThreadRow {
  id: number;
  externalId: string;
  state: string;
  initialSettings: string | null;
  openProgressEventId: number | null;
  provider: string | null;
  model: string | null;
  agent: string | null;
  joinedTo: number | null;
}

/** Older versions stored each step's outputs with the state; they mean nothing once read back. */
const STEP_OUTPUTS_OF_OLDER_VERSIONS = ["directives", "applied", "endedEpisode"];

/** A stored ThreadState as the engine takes it. */
export function parseState(text: string): ThreadState {
  const state = JSON.parse(text) as ThreadState & Record<string, unknown>;
  for (const field of STEP_OUTPUTS_OF_OLDER_VERSIONS) if (field in state) delete state[field];
  return state;
}

const toStored = (row: ThreadRow): StoredThread => {
  const state = parseState(row.state);
  return {
    id: row.id,
    externalId: row.externalId,
    state,
    initialSettings: row.initialSettings ? (JSON.parse(row.initialSettings) as ThreadSettings) : state.settings,
    openProgressEventId: row.openProgressEventId,
    labels: labelsKey(row),
    joinedTo: row.joinedTo,
  };
};

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

  createThread(sourceId: string, externalId: string, state: ThreadState, now: number): StoredThread {
    const info = statement(INSERT).run(sourceId, externalId, JSON.stringify(state), JSON.stringify(state.settings), now, now);
    return { id: Number(info.lastInsertRowid), externalId, state, initialSettings: state.settings, openProgressEventId: null, labels: null, joinedTo: null };
  },

  /**
   * Writes the thread's projection and state. Facts are rolled up under their thread's labels:
   * when those change, the thread's stored facts move with them (a new thread has none to move).
   * The labels saved are recorded on `thread`.
   */
  saveThread(thread: StoredThread, now: number): void {
    const { state } = thread;
    const labels = labelsKey(state);
    const moved = thread.labels !== null && thread.labels !== labels;
    if (moved) rollupRows.threadFacts(thread.id, -1);
    statement(SAVE).run({
      id: thread.id,
      parentExternalId: state.parentThreadId ?? null,
      title: state.title ?? null,
      agent: state.agent ?? null,
      provider: state.provider ?? null,
      model: state.model ?? null,
      policy: state.retry?.policy ?? state.episode?.policy ?? null,
      status: state.status,
      turnId: state.turnId ?? null,
      retryKind: state.retry?.kind ?? null,
      retryAttempt: state.retry?.attempt ?? null,
      retryMaxAttempts: state.retry?.maxAttempts ?? null,
      nextAttemptAt: state.retry?.nextAttemptAt ?? null,
      nextAttemptEstimated: state.retry?.nextAttemptEstimated ? 1 : 0,
      deadlineAt: state.retry?.deadlineAt ?? null,
      resetAt: state.retry?.resetAt ?? state.episode?.resetAt ?? null,
      advisedDelayMs: state.retry?.advisedDelayMs == null ? null : Math.round(state.retry.advisedDelayMs),
      lastErrorKind: state.lastError?.kind ?? null,
      lastErrorHttpStatus: state.lastError?.httpStatus ?? null,
      lastErrorCode: state.lastError?.code ?? null,
      lastErrorMessage: state.lastError?.message ?? null,
      wakeAt: state.wakeAt ?? null,
      state: JSON.stringify(state),
      lastEventAt: state.lastEventAt ?? null,
      openProgressEventId: thread.openProgressEventId,
      updatedAt: now,
    });
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

/** Threads whose wake time has come, earliest first (the watchdog's pass). */
export function dueThreadIds(now: number, limit = 200): Promise<number[]> {
  return serialized(() => pluck(DUE).all(now, limit) as number[]);
}

export function nextWakeAt(): Promise<number | null> {
  return serialized(() => (pluck(NEXT_WAKE).get() as number | null) ?? null);
}
