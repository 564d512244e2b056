import type { DirectiveIntent } from "@/lib/retry";
import type { DirectiveView } from "@/lib/wire/types";
import { committedRead, writeTransaction } from "./client";
import * as postgresReads from "./postgres/directives-read";
import { EXPIRED_DETAIL, toView, type AckOutcome, type DirectiveRow } from "./records/directives";
import * as postgres from "./postgres/directives";
import { statement } from "./statement";
import { onEitherStore } from "./store";

export type { AckOutcome } from "./records/directives";

/** Directives: what the engine asks of a source, their delivery and the source's answer. */

export { toView, type DirectiveRow } from "./records/directives";

const SELECT = `SELECT d.id, t.externalId, d.turnId, d.kind, d.reason, d.createdAt, d.state, d.threadId
  FROM "Directive" d JOIN "Thread" t ON t.id = d.threadId`;
const OPEN_FOR_THREADS = `${SELECT} WHERE d.sourceId = ? AND d.state IN ('pending', 'delivered')
  AND d.threadId IN (SELECT value FROM json_each(?)) ORDER BY d.createdAt, d.id`;
const DELIVERABLE = `${SELECT} WHERE d.sourceId = ? AND (d.state = 'pending' OR (d.state = 'delivered' AND d.deliveredAt <= ?))
  ORDER BY d.createdAt, d.id`;
const MARK_DELIVERED = `UPDATE "Directive" SET state = 'delivered', deliveredAt = ? WHERE id = ?`;
const FOR_ACK = `SELECT threadId, turnId, kind, state, result, dedupeKey AS key FROM "Directive" WHERE id = ? AND sourceId = ?`;
const RECORD_ACK = `UPDATE "Directive" SET state = ?, result = ?, detail = ?, acknowledgedAt = ?, deliveredAt = coalesce(deliveredAt, ?) WHERE id = ?`;
const INSERT = `INSERT OR IGNORE INTO "Directive" (id, sourceId, threadId, dedupeKey, turnId, kind, origin, reason, state, createdAt)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)`;
const ACK_APPLIED = `SELECT 1 FROM "Event" WHERE threadId = ? AND type = 'directive.acked'
  AND json_extract(normalized, '$.directiveId') = ? LIMIT 1`;
const EXPIRE = `UPDATE "Directive" SET state = 'expired', result = 'expired', detail = ?, acknowledgedAt = ? WHERE id = ?`;

/** The directive statements of a unit of work (see unit-of-work.ts); synchronous on SQLite. */
export const directiveRows = {
  /** Inserts a directive unless one with the same engine key exists; returns its id when new. */
  insertDirective(sourceId: string, threadId: number, intent: DirectiveIntent, now: number): string | null {
    const id = crypto.randomUUID();
    const info = statement(INSERT).run(id, sourceId, threadId, intent.key, intent.turnId ?? null, intent.kind, intent.origin, intent.reason, now);
    return info.changes === 1 ? id : null;
  },

  /**
   * Records a source's acknowledgement inside the unit of work that applies it to the thread; a
   * second, different answer for the same directive is refused.
   */
  recordAck(sourceId: string, id: string, result: "acknowledged" | "failed", detail: string | null, now: number): AckOutcome {
    const row = statement(FOR_ACK).get(id, sourceId) as
      | { threadId: number; turnId: string | null; kind: string; state: string; result: string | null; key: string }
      | undefined;
    if (!row) return { ok: false, status: 404, error: `No directive ${id} for this source.` };
    if (row.state === "acknowledged" || row.state === "failed") {
      if (row.result === result) return { ok: true, threadId: row.threadId, turnId: row.turnId, kind: row.kind, key: row.key, repeated: true };
      return { ok: false, status: 409, error: `Directive ${id} was already answered "${row.result}".` };
    }
    statement(RECORD_ACK).run(result, result, detail, now, now, id);
    return { ok: true, threadId: row.threadId, turnId: row.turnId, kind: row.kind, key: row.key, repeated: false };
  },

  /** Whether the thread already holds the acknowledgement of this directive (by its engine key). */
  ackApplied(threadId: number, key: string): boolean {
    return statement(ACK_APPLIED).get(threadId, key) !== undefined;
  },

  /** Directives the engine emitted for moments long past (e.g. while importing an old capture) are never sent. */
  expireDirective(id: string, now: number): void {
    statement(EXPIRE).run(EXPIRED_DETAIL, now, id);
  },
};

/** Directives not yet acknowledged for the given threads (what an ingest response carries). */
async function openDirectivesForThreadsOnSqlite(sourceId: string, threadIds: number[]): Promise<DirectiveView[]> {
  if (threadIds.length === 0) return [];
  return committedRead((sql) => (statement(OPEN_FOR_THREADS, sql).all(sourceId, JSON.stringify(threadIds)) as DirectiveRow[]).map(toView));
}

/**
 * Takes the source's directives for delivery: pending ones, and delivered ones nobody answered
 * within `redeliverAfterMs` (the response may have been lost). They are marked delivered at `now`.
 * Delivery is at least once; sources recognise a directive they already carried out by its id.
 */
function takePending(sourceId: string, now: number, redeliverAfterMs: number): Promise<DirectiveView[]> {
  return writeTransaction(() => {
    const rows = statement(DELIVERABLE).all(sourceId, now - redeliverAfterMs) as DirectiveRow[];
    const mark = statement(MARK_DELIVERED);
    for (const row of rows) mark.run(now, row.id);
    return rows.map(toView);
  });
}

export const { openDirectivesForThreads } = onEitherStore({ openDirectivesForThreads: openDirectivesForThreadsOnSqlite }, postgresReads);
export const { takePendingDirectives } = onEitherStore({ takePendingDirectives: takePending }, postgres);
