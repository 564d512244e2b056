import type pg from "pg";
import type { DirectiveView } from "@/lib/wire/types";
import { toView, type AckOutcome, type DirectiveRow } from "../records/directives";
import { msFromTimestamp, timestampFromMs } from "./time";

/**
 * Directive delivery on PostgreSQL, with the semantics of lib/db/directives.ts on SQLite, safe
 * for several instances: a source's pending directives, and those delivered but not answered
 * within their delivery lease, are claimed by one long-poller at a time, whichever instance it
 * reached (rows another poller is claiming are skipped, never waited for nor taken twice); a
 * claim marks them delivered at `now`, which starts a new lease. An acknowledgement is recorded
 * once: the same answer again is reported `repeated` and changes nothing, a different one is refused.
 */

const VIEW_COLUMNS = `d.id, t."externalId", d."turnId", d.kind, d.reason, ${msFromTimestamp(`d."createdAt"`)}::float8 AS "createdAt", d.state, d."threadId"`;

/** One statement: the rows are locked, skipped by concurrent claims, and marked delivered together. */
const CLAIM = `WITH due AS (
    SELECT id FROM "Directive"
    WHERE "sourceId" = $1 AND (state = 'pending' OR (state = 'delivered' AND "deliveredAt" <= ${timestampFromMs("$3")}))
    ORDER BY "createdAt", id
    LIMIT $4
    FOR UPDATE SKIP LOCKED
  )
  UPDATE "Directive" d SET state = 'delivered', "deliveredAt" = ${timestampFromMs("$2")}
  FROM due, "Thread" t WHERE d.id = due.id AND t.id = d."threadId"
  RETURNING ${VIEW_COLUMNS}`;

/**
 * Claims the source's deliverable directives at `now` (epoch ms): pending ones, and delivered
 * ones not answered within `redeliverAfterMs`. At most `limit`, oldest first.
 */
export async function claimDirectives(client: pg.ClientBase | pg.Pool, sourceId: string, now: number, redeliverAfterMs: number, limit?: number): Promise<DirectiveView[]> {
  const { rows } = await client.query<DirectiveRow>(CLAIM, [sourceId, now, now - redeliverAfterMs, limit ?? null]);
  // RETURNING keeps no order: oldest first, as the SQLite store delivers them.
  rows.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return rows.map(toView);
}

/** Records the answer only while none is recorded: two instances answering at once record one. */
const RECORD_ACK = `UPDATE "Directive" SET state = $3, result = $3, detail = $4, "acknowledgedAt" = ${timestampFromMs("$5")},
    "deliveredAt" = coalesce("deliveredAt", ${timestampFromMs("$5")})
  WHERE id = $1 AND "sourceId" = $2 AND state NOT IN ('acknowledged', 'failed')
  RETURNING "threadId", "turnId", kind, "dedupeKey" AS key`;
const FOR_ACK = `SELECT "threadId", "turnId", kind, result, "dedupeKey" AS key FROM "Directive" WHERE id = $1 AND "sourceId" = $2`;

interface AckRow {
  threadId: number;
  turnId: string | null;
  kind: string;
  key: string;
  result?: string | null;
}

/**
 * A source's answer to a directive (what directives.ts recordAck does on SQLite). Run it in the
 * unit of work that applies the answer to the thread, and apply it only when not `repeated`.
 */
export async function acknowledgeDirective(
  client: pg.ClientBase | pg.Pool,
  sourceId: string,
  id: string,
  result: "acknowledged" | "failed",
  detail: string | null,
  now: number,
): Promise<AckOutcome> {
  const recorded = await client.query<AckRow>(RECORD_ACK, [id, sourceId, result, detail, now]);
  if (recorded.rows.length) return { ok: true, ...pick(recorded.rows[0]), repeated: false };
  const { rows } = await client.query<AckRow>(FOR_ACK, [id, sourceId]);
  const row = rows[0];
  if (!row) return { ok: false, status: 404, error: `No directive ${id} for this source.` };
  if (row.result === result) return { ok: true, ...pick(row), repeated: true };
  return { ok: false, status: 409, error: `Directive ${id} was already answered "${row.result}".` };
}

const pick = ({ threadId, turnId, kind, key }: AckRow) => ({ threadId, turnId, kind, key });
