import type pg from "pg";
import type { DirectiveIntent } from "@/lib/retry";
import { EXPIRED_DETAIL, type AckOutcome } from "../records/directives";
import type { DirectiveView } from "@/lib/wire/types";
import { acknowledgeDirective, claimDirectives } from "./directive-claim";
import { pool } from "./pool";
import { timestampFromMs } from "./time";

/** lib/db/directives.ts's unit-of-work statements on PostgreSQL. */

// DO NOTHING on any conflict, as INSERT OR IGNORE: the engine's key per thread, or (never in practice) the id.
const INSERT = `INSERT INTO "Directive" (id, "sourceId", "threadId", "dedupeKey", "turnId", kind, origin, reason, state, "createdAt")
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', ${timestampFromMs("$9")}) ON CONFLICT DO NOTHING`;
const ACK_APPLIED = `SELECT 1 FROM "Event" WHERE "threadId" = $1 AND type = 'directive.acked'
  AND normalized::jsonb ->> 'directiveId' = $2 LIMIT 1`;
const EXPIRE = `UPDATE "Directive" SET state = 'expired', result = 'expired', detail = $1, "acknowledgedAt" = ${timestampFromMs("$2")} WHERE id = $3`;

export function directiveRowsOn(client: pg.ClientBase) {
  return {
    async insertDirective(sourceId: string, threadId: number, intent: DirectiveIntent, now: number): Promise<string | null> {
      const id = crypto.randomUUID();
      const info = await client.query(INSERT, [id, sourceId, threadId, intent.key, intent.turnId ?? null, intent.kind, intent.origin, intent.reason, now]);
      return info.rowCount === 1 ? id : null;
    },

    recordAck(sourceId: string, id: string, result: "acknowledged" | "failed", detail: string | null, now: number): Promise<AckOutcome> {
      return acknowledgeDirective(client, sourceId, id, result, detail, now);
    },

    async ackApplied(threadId: number, key: string): Promise<boolean> {
      return (await client.query(ACK_APPLIED, [threadId, key])).rows.length > 0;
    },

    async expireDirective(id: string, now: number): Promise<void> {
      await client.query(EXPIRE, [EXPIRED_DETAIL, now, id]);
    },
  };
}

/** lib/db/directives.ts's takePendingDirectives: a claim (directive-claim.ts), so one poller at a time takes a directive. */
export async function takePendingDirectives(sourceId: string, now: number, redeliverAfterMs: number): Promise<DirectiveView[]> {
  return claimDirectives(pool(), sourceId, now, redeliverAfterMs);
}
