import type { DirectiveView } from "@/lib/wire/types";
import { db } from "./client";

interface DirectiveRow {
  id: string;
  externalId: string;
  turnId: string | null;
  kind: string;
  reason: string;
  createdAt: number;
  state: string;
  threadId: number;
}

const toView = (row: DirectiveRow): DirectiveView => ({
  id: row.id,
  threadId: row.externalId,
  turnId: row.turnId,
  kind: row.kind,
  reason: row.reason,
  createdAt: new Date(row.createdAt).toISOString(),
});

const SELECT = `SELECT d.id, t.externalId, d.turnId, d.kind, d.reason, d.createdAt, d.state, d.threadId
  FROM "Directive" d JOIN "Thread" t ON t.id = d.threadId`;

/** Directives not yet acknowledged for the given threads (what an ingest response carries). */
export function openDirectivesForThreads(sourceId: string, threadIds: number[]): DirectiveView[] {
  if (threadIds.length === 0) return [];
  const rows = db()
    .sql.prepare(
      `${SELECT} WHERE d.sourceId = ? AND d.state IN ('pending', 'delivered')
        AND d.threadId IN (SELECT value FROM json_each(?)) ORDER BY d.createdAt, d.id`,
    )
    .all(sourceId, JSON.stringify(threadIds)) as DirectiveRow[];
  return rows.map(toView);
}

/**
 * Takes the source's directives for delivery: pending ones, and delivered ones nobody answered
 * within `redeliverAfterMs` (the response may have been lost). They are marked delivered at `now`.
 * Delivery is at least once; sources recognise a directive they already carried out by its id.
 */
export function takePendingDirectives(sourceId: string, now: number, redeliverAfterMs: number): DirectiveView[] {
  const { sql } = db();
  return sql.transaction(() => {
    const rows = sql
      .prepare(
        `${SELECT} WHERE d.sourceId = ? AND (d.state = 'pending' OR (d.state = 'delivered' AND d.deliveredAt <= ?))
         ORDER BY d.createdAt, d.id`,
      )
      .all(sourceId, now - redeliverAfterMs) as DirectiveRow[];
    const mark = sql.prepare(`UPDATE "Directive" SET state = 'delivered', deliveredAt = ? WHERE id = ?`);
    for (const row of rows) mark.run(now, row.id);
    return rows.map(toView);
  })();
}

export type AckOutcome =
  | { ok: true; threadId: number; turnId: string | null; kind: string; key: string; repeated: boolean }
  | { ok: false; status: 404 | 409; error: string };

/** Records a source's acknowledgement; a second, different answer for the same directive is refused. */
export function recordAck(
  sourceId: string,
  id: string,
  result: "acknowledged" | "failed",
  detail: string | null,
  now: number,
): AckOutcome {
  const { sql } = db();
  const row = sql
    .prepare(`SELECT threadId, turnId, kind, state, result, dedupeKey AS key FROM "Directive" WHERE id = ? AND sourceId = ?`)
    .get(id, sourceId) as { threadId: number; turnId: string | null; kind: string; state: string; result: string | null; key: string } | undefined
  if (!row) return { ok: false, status: 404, error: `No directive ${id} for this source.` };
  if (row.state === "acknowledged" || row.state === "failed") {
    if (row.result === result) return { ok: true, threadId: row.threadId, turnId: row.turnId, kind: row.kind, key: row.key, repeated: true };
    return { ok: false, status: 409, error: `Directive ${id} was already answered "${row.result}".` };
  }
  sql
    .prepare(
      `UPDATE "Directive" SET state = ?, result = ?, detail = ?, acknowledgedAt = ?, deliveredAt = coalesce(deliveredAt, ?) WHERE id = ?`,
    )
    .run(result, result, detail, now, now, id);
  return { ok: true, threadId: row.threadId, turnId: row.turnId, kind: row.kind, key: row.key, repeated: false };
}

/** Directives the engine emitted for moments long past (e.g. while importing an old capture) are never sent. */
export function expireDirective(id: string, now: number): void {
  db()
    .sql.prepare(`UPDATE "Directive" SET state = 'expired', result = 'expired', detail = ?, acknowledgedAt = ? WHERE id = ?`)
    .run("emitted for a moment already past when it was recorded (an import or replay); not sent", now, id);
}
