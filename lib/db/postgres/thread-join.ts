import type pg from "pg";
import { OTLP_FORMAT, SERVER_FORMAT } from "@/lib/ingest/types";
import type { RollupRowsOn } from "./rollups";

/** lib/db/thread-join.ts on PostgreSQL (the rules are explained there). */

const REPORTED_BY_RELAY = (t: string) =>
  `EXISTS (SELECT 1 FROM "Event" e WHERE e."threadId" = ${t}.id AND e.format NOT IN ('${OTLP_FORMAT}', '${SERVER_FORMAT}'))`;

const RELAY_THREAD = `SELECT t.id FROM "Thread" t WHERE t."externalId" = $1 AND t."sourceId" <> $2 AND t."joinedTo" IS NULL
  AND ${REPORTED_BY_RELAY("t")} ORDER BY t.id LIMIT 1`;
const OTLP_THREADS = `SELECT t.id FROM "Thread" t WHERE t."externalId" = $1 AND t."sourceId" <> $2 AND t."joinedTo" IS NULL
  AND NOT ${REPORTED_BY_RELAY("t")} ORDER BY t.id`;
const SELF_BY_RELAY = `SELECT ${REPORTED_BY_RELAY("t")} AS relay FROM "Thread" t WHERE t.id = $1`;
const JOIN = `UPDATE "Thread" SET "joinedTo" = $1 WHERE id = $2`;

export function threadJoinRowsOn(client: pg.ClientBase, rollups: RollupRowsOn) {
  async function join(threadId: number, relayThreadId: number): Promise<void> {
    await rollups.threadFacts(threadId, -1);
    await client.query(JOIN, [relayThreadId, threadId]);
  }

  return {
    async joinPaths(thread: { id: number; sourceId: string; externalId: string; joinedTo: number | null }, format: string): Promise<{ joinedTo: number | null; changed: number[] }> {
      const current = thread.joinedTo;
      if (current !== null || format === SERVER_FORMAT) return { joinedTo: current, changed: [] };
      const where = [thread.externalId, thread.sourceId];
      if (format === OTLP_FORMAT) {
        if ((await client.query<{ relay: boolean }>(SELF_BY_RELAY, [thread.id])).rows[0]?.relay) return { joinedTo: null, changed: [] };
        const relay = (await client.query<{ id: number }>(RELAY_THREAD, where)).rows[0]?.id;
        if (relay === undefined) return { joinedTo: null, changed: [] };
        await join(thread.id, relay);
        return { joinedTo: relay, changed: [thread.id, relay] };
      }
      const joined = (await client.query<{ id: number }>(OTLP_THREADS, where)).rows.map((row) => row.id);
      for (const id of joined) await join(id, thread.id);
      return { joinedTo: null, changed: joined.length ? [thread.id, ...joined] : [] };
    },
  };
}
