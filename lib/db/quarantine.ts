import type { ThreadTransition } from "@/lib/alerts/rules";
import { statement } from "./statement";

/**
 * A thread the engine cannot step (its stored state or events make every unit of work throw) is
 * set aside as `broken`: no wake time, so the watchdog stops picking it, and the error is kept on
 * the thread and in its timeline. Plain SQL on purpose: the stored state may be what fails to parse.
 */
const QUARANTINE = `UPDATE "Thread" SET status = 'broken', wakeAt = NULL, lastErrorMessage = @message, updatedAt = @now,
    state = CASE WHEN json_valid(state) THEN json_set(state, '$.status', 'broken', '$.wakeAt', json('null')) ELSE state END
  WHERE id = @id`;
const NOTE = `INSERT INTO "Event" (sourceId, threadId, idempotencyKey, format, nativeType, type, at, receivedAt, count, message, late, raw, normalized)
  SELECT sourceId, id, @key, 'radar', NULL, 'thread.quarantined', @now, @now, 1, @message, 0, @raw, @normalized FROM "Thread" WHERE id = @id`;
const IDENTITY = `SELECT externalId, title, status FROM "Thread" WHERE id = ?`;

export const quarantineRows = {
  /**
   * Marks the thread broken with `message` and notes it in its timeline; returns the transition
   * (null when the thread is gone). The note's seq stands for the last applied event, so this
   * turn into broken has its own alert key.
   */
  quarantineThread(id: number, message: string, now: number): ThreadTransition | null {
    const row = statement(IDENTITY).get(id) as { externalId: string; title: string | null; status: string } | undefined;
    if (!row) return null;
    statement(QUARANTINE).run({ id, message, now });
    const event = { type: "thread.quarantined", at: now, threadId: row.externalId, reason: message };
    const note = statement(NOTE).run({ id, now, message, key: `radar:${crypto.randomUUID()}`, raw: JSON.stringify({ origin: "radar", ...event }), normalized: JSON.stringify(event) });
    return { key: id, externalId: row.externalId, title: row.title, statusBefore: row.status, status: "broken", lastSeq: Number(note.lastInsertRowid) };
  },
};
