import type { DirectiveView } from "@/lib/wire/types";

/**
 * What the directive statements answer on either store (lib/db/directives.ts,
 * lib/db/postgres/directive-claim.ts, lib/db/postgres/directives.ts; times in epoch ms), and how a
 * row maps to its view.
 */

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

export type AckOutcome =
  | { ok: true; threadId: number; turnId: string | null; kind: string; key: string; repeated: boolean }
  | { ok: false; status: 404 | 409; error: string };

/** The answer recorded on a directive whose delivery was never needed. */
export const EXPIRED_DETAIL = "emitted for a moment already past when it was recorded (an import or replay); not sent";
