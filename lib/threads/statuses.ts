import { THREAD_STATUSES, type ThreadStatus } from "@/lib/retry/types";

/**
 * Groups of thread statuses the board, the API, the pipeline and the UI agree on. Every status
 * is placed in every group here, so a new status fails the type check until it is.
 */
interface StatusGroups {
  /** What an operator must look at: listed first on the board. */
  attention: boolean;
  /**
   * The agent may still be working: Stop retrying can end it, and a parent's cascaded stop
   * reaches it. (`stalled` is only ever a view of a stored `retrying`/`waiting_reset`.)
   */
  active: boolean;
  /** Stored statuses that show as `stalled` once their deadline has passed (the engine's viewStatus). */
  waiting: boolean;
  /** Resume now applies: the turn ended (or its continuation is scheduled and can be brought forward). */
  resumable: boolean;
  /** Retry now applies: the source is waiting out a backoff or a window reset. */
  retryableNow: boolean;
}

const GROUPS: Record<ThreadStatus, StatusGroups> = {
  running: { attention: false, active: true, waiting: false, resumable: false, retryableNow: false },
  retrying: { attention: true, active: true, waiting: true, resumable: false, retryableNow: true },
  waiting_reset: { attention: true, active: true, waiting: true, resumable: false, retryableNow: true },
  stalled: { attention: true, active: true, waiting: false, resumable: false, retryableNow: true },
  recovered: { attention: false, active: true, waiting: false, resumable: false, retryableNow: false },
  exhausted: { attention: true, active: false, waiting: false, resumable: true, retryableNow: false },
  failed: { attention: false, active: false, waiting: false, resumable: true, retryableNow: false },
  recovery_scheduled: { attention: true, active: true, waiting: false, resumable: true, retryableNow: false },
  stopping: { attention: true, active: false, waiting: false, resumable: false, retryableNow: false },
  stopped: { attention: false, active: false, waiting: false, resumable: false, retryableNow: false },
  broken: { attention: true, active: false, waiting: false, resumable: true, retryableNow: false },
  completed: { attention: false, active: false, waiting: false, resumable: false, retryableNow: false },
  idle: { attention: false, active: false, waiting: false, resumable: false, retryableNow: false },
};

const statusesWhere = (group: keyof StatusGroups): ThreadStatus[] => THREAD_STATUSES.filter((status) => GROUPS[status][group]);

export const ATTENTION_STATUSES: string[] = statusesWhere("attention");

/** Statuses whose agent may still be working: what Stop retrying and a cascaded stop can end. */
export const STOPPABLE_STATUSES: string[] = statusesWhere("active");

export function isStoppable(status: string): boolean {
  return STOPPABLE_STATUSES.includes(status);
}

export const WAITING_STATUSES: string[] = statusesWhere("waiting");

/** Statuses Resume now applies to (lib/threads/control.ts adds what the source can carry out). */
export const RESUMABLE_STATUSES: string[] = statusesWhere("resumable");

/** Statuses Retry now applies to. */
export const RETRYABLE_NOW_STATUSES: string[] = statusesWhere("retryableNow");
