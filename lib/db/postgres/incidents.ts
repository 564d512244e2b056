import type pg from "pg";
import type { IncidentRecord } from "@/lib/retry";
import { toRecord, type IncidentRow } from "../records/incidents";
import { lockIncidents } from "./locks";
import { pool } from "./pool";
import { msFromTimestamp, timestampFromMs } from "./time";

/** lib/db/incidents.ts's unit-of-work statements on PostgreSQL. */

const TIMES = ["startedAt", "lastNoticeAt", "endedAt", "resetAt", "acknowledgedAt", "silencedUntil"];
const ACTIVE = `SELECT id, state, kind, provider, model, "sourceId", notices, "threadCount", threads, "acknowledgedBy", "closedBy",
    ${TIMES.map((t) => `${msFromTimestamp(`"${t}"`)} AS "${t}"`).join(", ")}
  FROM "Incident" WHERE state IN ('forming', 'open') ORDER BY "startedAt", id`;
const SAVE = `INSERT INTO "Incident" (id, state, kind, provider, model, "sourceId", "startedAt", "lastNoticeAt", "endedAt", "closedBy", notices, "resetAt", "threadCount", threads)
  VALUES ($1, $2, $3, $4, $5, $6, ${timestampFromMs("$7")}, ${timestampFromMs("$8")}, ${timestampFromMs("$9")}, $10, $11, ${timestampFromMs("$12")}, $13, $14)
  ON CONFLICT (id) DO UPDATE SET state = excluded.state, "startedAt" = excluded."startedAt", "lastNoticeAt" = excluded."lastNoticeAt",
    "endedAt" = excluded."endedAt", "closedBy" = excluded."closedBy", notices = excluded.notices, "resetAt" = excluded."resetAt",
    "threadCount" = excluded."threadCount", threads = excluded.threads`;
const DELETE = `DELETE FROM "Incident" WHERE id = $1`;

export function incidentRowsOn(client: pg.ClientBase) {
  return {
    /** Under the incidents' lock until the unit of work ends (locks.ts). */
    async activeIncidents(): Promise<IncidentRecord[]> {
      await lockIncidents(client);
      return (await client.query<IncidentRow>(ACTIVE)).rows.map(toRecord);
    },
    async saveIncident(incident: IncidentRecord): Promise<void> {
      const i = incident;
      await client.query(SAVE, [
        i.id, i.state, i.kind, i.provider, i.model, i.sourceId, i.startedAt, i.lastNoticeAt, i.endedAt, i.closedBy, i.notices, i.resetAt,
        i.threads.length, JSON.stringify(i.threads),
      ]);
    },
    async deleteIncident(id: string): Promise<void> {
      await client.query(DELETE, [id]);
    },
  };
}

/* lib/db/incidents.ts's operator writes, outside a unit of work, on PostgreSQL. */

const ACKNOWLEDGE = `UPDATE "Incident" SET "acknowledgedBy" = $1, "acknowledgedAt" = ${timestampFromMs("$2")} WHERE id = $3 AND state = 'open'`;
const NOTE = `INSERT INTO "IncidentNote" ("incidentId", at, actor, text) SELECT id, ${timestampFromMs("$1")}, $2, $3 FROM "Incident" WHERE id = $4 AND state != 'forming'`;

export async function acknowledgeIncident(id: string, actor: string, now: number): Promise<boolean> {
  return ((await pool().query(ACKNOWLEDGE, [actor, now, id])).rowCount ?? 0) > 0;
}

export async function annotateIncident(id: string, actor: string, text: string, now: number): Promise<boolean> {
  return ((await pool().query(NOTE, [now, actor, text, id])).rowCount ?? 0) > 0;
}
