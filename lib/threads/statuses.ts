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
}

const GROUPS: Record<ThreadStatus, StatusGroups> = {
  running: { attention: false, active: true, waiting: false },
  retrying: { attention: true, active: true, waiting: true },
  waiting_reset: { attention: true, active: true, waiting: true },
  stalled: { attention: true, active: true, waiting: false },
  recovered: { attention: false, active: true, waiting: false },
  exhausted: { attention: true, active: false, waiting: false },
  failed: { attention: false, active: false, waiting: false },
  recovery_scheduled: { attention: true, active: true, waiting: false },
  stopping: { attention: true, active: false, waiting: false },
  stopped: { attention: false, active: false, waiting: false },
  broken: { attention: true, active: false, waiting: false },
  completed: { attention: false, active: false, waiting: false },
  idle: { attention: false, active: false, waiting: false },
};

const statusesWhere = (group: keyof StatusGroups): ThreadStatus[] => THREAD_STATUSES.filter((status) => GROUPS[status][group]);

export const ATTENTION_STATUSES: string[] = statusesWhere("attention");

/** Statuses whose agent may still be working: what Stop retrying and a cascaded stop can end. */
export const STOPPABLE_STATUSES: string[] = statusesWhere("active");

export function isStoppable(status: string): boolean {
  return STOPPABLE_STATUSES.includes(status);
}

export const WAITING_STATUSES: string[] = statusesWhere("waiting");
