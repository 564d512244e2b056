import type pg from "pg";
import type { ThreadTransition } from "@/lib/alerts/rules";
import { timestampFromMs } from "./time";

/**
 * lib/db/quarantine.ts on PostgreSQL. The stored state is patched in JavaScript instead of SQL
 * (SQLite's json_set): a state that does not parse, maybe the very reason for the quarantine, is
 * left as it is, as there.
 */
const IDENTITY = `SELECT "externalId", title, status, state FROM "Thread" WHERE id = $1 FOR UPDATE`;
const QUARANTINE = `UPDATE "Thread" SET status = 'broken', "wakeAt" = NULL, "lastErrorMessage" = $2, "updatedAt" = ${timestampFromMs("$3")}, state = $4 WHERE id = $1`;
const NOTE = `INSERT INTO "Event" ("sourceId", "threadId", "idempotencyKey", format, "nativeType", type, at, "receivedAt", count, message, late, raw, normalized)
  SELECT "sourceId", id, $2, 'radar', NULL, 'thread.quarantined', ${timestampFromMs("$3")}, ${timestampFromMs("$3")}, 1, $4, false, $5, $6 FROM "Thread" WHERE id = $1
  RETURNING id`;

function brokenState(text: string): string {
  let state: unknown;
  try {
    state = JSON.parse(text);
  } catch {
    return text;
  }
  return state !== null && typeof state === "object" && !Array.isArray(state) ? JSON.stringify({ ...state, status: "broken", wakeAt: null }) : text;
}

export function quarantineRowsOn(client: pg.ClientBase) {
  return {
    async quarantineThread(id: number, message: string, now: number): Promise<ThreadTransition | null> {
      const { rows } = await client.query<{ externalId: string; title: string | null; status: string; state: string }>(IDENTITY, [id]);
      const row = rows[0];
      if (!row) return null;
      await client.query(QUARANTINE, [id, message, now, brokenState(row.state)]);
      const event = { type: "thread.quarantined", at: now, threadId: row.externalId, reason: message };
      const note = await client.query<{ id: number }>(NOTE, [id, `radar:${crypto.randomUUID()}`, now, message, JSON.stringify({ origin: "radar", ...event }), JSON.stringify(event)]);
      return { key: id, externalId: row.externalId, title: row.title, statusBefore: row.status, status: "broken", lastSeq: note.rows[0].id };
    },
  };
}
