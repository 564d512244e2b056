/** A turn as saved: its start is kept from the first save, its status and end are the latest. */
export interface TurnRow {
  threadId: number;
  turnId: string;
  status: string;
  startedAt: number;
  endedAt: number | null;
}

/** The calls an episode made, as stored: an engine state saved before the count existed counts its notices. */
export function attemptsMadeOf(episode: { attemptsMade?: number; attempts: { n: number }[] }): number {
  return episode.attemptsMade ?? Math.max(1, episode.attempts.at(-1)?.n ?? 1);
}
