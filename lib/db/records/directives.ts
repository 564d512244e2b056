import type { DirectiveView } from "@/lib/wire/types";

/** A directive as its delivery reads it, on either store (times in epoch ms), and its view. */

export interface DirectiveRow {
  id: string;
  externalId: string;
  turnId: string | null;
  kind: string;
  reason: string;
  createdAt: number;
  state: string;
  threadId: number;
}

export const toView = (row: DirectiveRow): DirectiveView => ({
  id: row.id,
  threadId: row.externalId,
  turnId: row.turnId,
  kind: row.kind,
  reason: row.reason,
  createdAt: new Date(row.createdAt).toISOString(),
});
