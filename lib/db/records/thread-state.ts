import type { ThreadSettings, ThreadState } from "@/lib/retry";
import { labelsKey } from "./rollups";

/**
 * The engine's side of a thread as both stores' statements answer it (lib/db/thread-state.ts,
 * lib/db/postgres/thread-state.ts), and the projection both write from its state.
 */

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

export interface ThreadRow {
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

export const toStored = (row: ThreadRow): StoredThread => {
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

/** A thread created now, as both stores answer it. */
export const newStored = (id: number, externalId: string, state: ThreadState): StoredThread => ({
  id,
  externalId,
  state,
  initialSettings: state.settings,
  openProgressEventId: null,
  labels: null,
  joinedTo: null,
});

/** The columns projected from a thread's state for the readers (booleans as booleans: each store binds its own). */
export function threadProjection(thread: StoredThread, now: number) {
  const { state } = thread;
  return {
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
    nextAttemptEstimated: Boolean(state.retry?.nextAttemptEstimated),
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
  };
}
