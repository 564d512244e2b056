import type pg from "pg";
import type { IncidentRecord } from "@/lib/retry";
import { knownIncidentThreads, type ActiveIncidentRow, type StoredIncidentThreads } from "../records/incidents";
import { lockIncidents } from "./locks";
import { pool } from "./pool";
import { msFromTimestamp, timestampFromMs } from "./time";

/** lib/db/incidents.ts's unit-of-work statements on PostgreSQL. */

const TIMES = ["startedAt", "lastNoticeAt", "endedAt", "resetAt"];
/** The active incidents without their thread lists, read only where not known (KnownIncidentThreads). */
const ACTIVE = `SELECT id, state, kind, provider, model, "sourceId", notices, "closedBy", revision,
    ${TIMES.map((t) => `${msFromTimestamp(`"${t}"`)} AS "${t}"`).join(", ")}
  FROM "Incident" WHERE state IN ('forming', 'open') ORDER BY "startedAt", id`;
const THREADS_OF = `SELECT id, revision, threads FROM "Incident" WHERE id = ANY($1::text[])`;
const UPDATED = `state = excluded.state, "startedAt" = excluded."startedAt", "lastNoticeAt" = excluded."lastNoticeAt",
    "endedAt" = excluded."endedAt", "closedBy" = excluded."closedBy", notices = excluded.notices, "resetAt" = excluded."resetAt",
    "threadCount" = excluded."threadCount", threads = excluded.threads, revision = excluded.revision`;
const SAVE = `INSERT INTO "Incident" (id, state, kind, provider, model, "sourceId", "startedAt", "lastNoticeAt", "endedAt", "closedBy", notices, "resetAt", "threadCount", threads, revision)
  VALUES ($1, $2, $3, $4, $5, $6, ${timestampFromMs("$7")}, ${timestampFromMs("$8")}, ${timestampFromMs("$9")}, $10, $11, ${timestampFromMs("$12")}, $13, $14, $15)
  ON CONFLICT (id) DO UPDATE SET ${UPDATED}`;
/** Many incidents in one statement (no id twice). */
const SAVE_MANY = `INSERT INTO "Incident" (id, state, kind, provider, model, "sourceId", "startedAt", "lastNoticeAt", "endedAt", "closedBy", notices, "resetAt", "threadCount", threads, revision)
  SELECT id, state, kind, provider, model, "sourceId", ${timestampFromMs(`"startedAt"`)}, ${timestampFromMs(`"lastNoticeAt"`)}, ${timestampFromMs(`"endedAt"`)},
    "closedBy", notices, ${timestampFromMs(`"resetAt"`)}, "threadCount", threads, revision
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::float8[], $8::float8[], $9::float8[], $10::text[], $11::int[],
    $12::float8[], $13::int[], $14::text[], $15::text[]) WITH ORDINALITY
    AS r(id, state, kind, provider, model, "sourceId", "startedAt", "lastNoticeAt", "endedAt", "closedBy", notices, "resetAt", "threadCount", threads, revision, i)
  ORDER BY i
  ON CONFLICT (id) DO UPDATE SET ${UPDATED}`;
const DELETE = `DELETE FROM "Incident" WHERE id = $1`;

/** A save's columns, under a fresh revision (knownIncidentThreads). */
function saveColumns(i: IncidentRecord) {
  const revision = knownIncidentThreads.save(i);
  return [
    i.id, i.state, i.kind, i.provider, i.model, i.sourceId, i.startedAt, i.lastNoticeAt, i.endedAt, i.closedBy, i.notices, i.resetAt,
    i.threads.length, JSON.stringify(i.threads), revision,
  ];
}

/**
 * Incident saves of a unit of work held back and written in one statement when it next does
 * anything else (unit-of-work.ts): a batch that advances many incidents costs one round trip.
 */
export function heldIncidentSavesOn(client: pg.ClientBase) {
  const held = new Map<string, ReturnType<typeof saveColumns>>();
  return {
    async saveIncident(incident: IncidentRecord): Promise<void> {
      // Saved again: the later save stands, as one upsert after the other would leave it.
      held.delete(incident.id);
      held.set(incident.id, saveColumns(incident));
    },
    async flush(): Promise<void> {
      if (!held.size) return;
      const rows = [...held.values()];
      held.clear();
      await client.query(SAVE_MANY, rows[0].map((_, column) => rows.map((row) => row[column])));
    },
  };
}

export function incidentRowsOn(client: pg.ClientBase) {
  return {
    /** Under the incidents' lock until the unit of work ends (locks.ts). */
    async activeIncidents(): Promise<IncidentRecord[]> {
      await lockIncidents(client);
      const rows = (await client.query<ActiveIncidentRow>(ACTIVE)).rows;
      const unknown = knownIncidentThreads.unknown(rows);
      if (unknown.length) knownIncidentThreads.read((await client.query<StoredIncidentThreads>(THREADS_OF, [unknown])).rows);
      return knownIncidentThreads.records(rows);
    },
    async saveIncident(incident: IncidentRecord): Promise<void> {
      await client.query(SAVE, saveColumns(incident));
    },
    async deleteIncident(id: string): Promise<void> {
      await client.query(DELETE, [id]);
      knownIncidentThreads.forget(id);
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
