/** Groups of thread statuses (SPEC §6) the board, the API and the UI agree on. */

/** What an operator must look at: listed first on the board. */
export const ATTENTION_STATUSES = ["retrying", "stalled", "stopping", "waiting_reset", "recovery_scheduled", "exhausted", "broken"];

/** Statuses in which a thread has something Stop retrying can end. */
export const STOPPABLE_STATUSES = ["running", "retrying", "stalled", "waiting_reset", "recovery_scheduled", "recovered"];

export function isStoppable(status: string): boolean {
  return STOPPABLE_STATUSES.includes(status);
}

/** Stored statuses that show as `stalled` once their deadline has passed (the engine's viewStatus). */
export const WAITING_STATUSES = ["retrying", "waiting_reset"];
