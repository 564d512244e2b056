/** A turn as saved: its start is kept from the first save, its status and end are the latest. */
export interface TurnRow {
  threadId: number;
  turnId: string;
  status: string;
  startedAt: number;
  endedAt: number | null;
}
