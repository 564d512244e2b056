/** What a retention step answers on either store (lib/db/retention.ts, lib/db/postgres/retention.ts). */

/** A position in the event-time order: the last row a step examined. */
export interface PruneCursor {
  at: number;
  id: number;
}

export interface PruneStep {
  /** Events deleted by this step. */
  pruned: number;
  /** Where the next step starts (exclusive), or null when nothing older than the cutoff is left. */
  after: PruneCursor | null;
}

export const PRUNE_START: PruneCursor = { at: Number.MIN_SAFE_INTEGER, id: 0 };
