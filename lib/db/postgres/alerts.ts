import type pg from "pg";
import type { AlertFormat } from "@/lib/alerts/body";
import type { Alert } from "@/lib/alerts/rules";
import { alertAttemptAudit, type DeliveryAttempt } from "../records/alerts";
import type { auditRowsOn } from "./audit";
import { inTransaction, pool } from "./pool";
import { timestampFromMs } from "./time";

/** lib/db/alerts.ts's unit-of-work statements on PostgreSQL. */

/** Every alert of a unit of work in one statement, in their order (one per matching rule, a known dedupe key skipped). */
const ENQUEUE = `INSERT INTO "AlertOutbox" ("dedupeKey", "ruleId", "destinationId", event, alert, state, attempts, "createdAt", "nextAttemptAt")
  SELECT a.key, r.id, r."destinationId", a.event, a.alert, 'pending', 0, ${timestampFromMs("$6")}, ${timestampFromMs("$6")}
  FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[], $5::text[]) WITH ORDINALITY AS a(key, event, alert, threshold, incident, i)
  JOIN "AlertRule" r ON r.event = a.event AND (a.threshold IS NULL OR r.threshold = a.threshold)
  JOIN "AlertDestination" d ON d.id = r."destinationId"
  WHERE NOT EXISTS (SELECT 1 FROM "Incident" n WHERE n.id = a.incident AND n."silencedUntil" > ${timestampFromMs("$6")})
  ORDER BY a.i, r.id
  ON CONFLICT DO NOTHING`;
const SOURCE_NAMES = `SELECT id, name FROM "Source" WHERE id = ANY($1::text[])`;
const RECORD = `UPDATE "AlertOutbox" SET state = $2, attempts = attempts + 1, "lastAttemptAt" = ${timestampFromMs("$3")}, "lastStatus" = $4, "lastError" = $5,
  "nextAttemptAt" = CASE WHEN $2 = 'pending' THEN ${timestampFromMs("$6")} ELSE "nextAttemptAt" END, "deliveredAt" = ${timestampFromMs("$7")} WHERE id = $1`;
const ATTEMPT = `INSERT INTO "AlertDelivery" ("outboxId", at, status, error, result, "durationMs") VALUES ($1, ${timestampFromMs("$2")}, $3, $4, $5, round($6::float8))`;
const RAISE = `INSERT INTO "AlertCondition" (key, event, "raisedAt", subject) VALUES ($1, $2, ${timestampFromMs("$3")}, $4) ON CONFLICT DO NOTHING`;
const CLEAR = `DELETE FROM "AlertCondition" WHERE key = $1`;
const LEARN = `INSERT INTO "AlertSourceRhythm" ("sourceId", "lastSeenAt", "usualGapMs") VALUES ($1, ${timestampFromMs("$2")}, round($3::float8))
  ON CONFLICT ("sourceId") DO UPDATE SET "lastSeenAt" = excluded."lastSeenAt", "usualGapMs" = excluded."usualGapMs"`;

export function alertRowsOn(client: pg.ClientBase, audit: ReturnType<typeof auditRowsOn>) {
  return {
    async enqueueAlerts(alerts: readonly Alert[], now: number): Promise<number> {
      if (!alerts.length) return 0;
      const rows = alerts.map(({ key, threshold, ...alert }) => ({ key, threshold: threshold ?? null, alert, incident: alert.event.startsWith("incident.") ? alert.subject : null }));
      const { rowCount } = await client.query(ENQUEUE, [
        rows.map((row) => row.key),
        rows.map((row) => row.alert.event),
        rows.map((row) => JSON.stringify(row.alert)),
        rows.map((row) => row.threshold),
        rows.map((row) => row.incident),
        now,
      ]);
      return rowCount ?? 0;
    },
    async sourceNames(ids: readonly string[]): Promise<Map<string, string>> {
      if (!ids.length) return new Map();
      return new Map((await client.query<{ id: string; name: string }>(SOURCE_NAMES, [ids])).rows.map((r) => [r.id, r.name]));
    },
    async recordAlertAttempt(attempt: DeliveryAttempt): Promise<void> {
      const { destination: _destination, event: _event, ...row } = attempt;
      await client.query(RECORD, [row.id, row.state, row.at, row.status, row.error, row.nextAttemptAt, row.state === "delivered" ? row.at : null]);
      await client.query(ATTEMPT, [row.id, row.at, row.status, row.error, row.state, row.durationMs]);
      await audit.insertAudit(alertAttemptAudit(attempt));
    },
    async raiseCondition(condition: { key: string; event: string; subject: string }, now: number): Promise<void> {
      await client.query(RAISE, [condition.key, condition.event, now, condition.subject]);
    },
    async clearCondition(key: string): Promise<void> {
      await client.query(CLEAR, [key]);
    },
    async learnSourceRhythm(sourceId: string, lastSeenAt: number, usualGapMs: number | null): Promise<void> {
      await client.query(LEARN, [sourceId, lastSeenAt, usualGapMs]);
    },
  };
}

/* lib/db/alerts.ts's admin writes and retention, outside a unit of work, on PostgreSQL. */

const INSERT_DESTINATION = `INSERT INTO "AlertDestination" (id, name, url, format, secret, "createdAt", "createdBy") VALUES ($1, $2, $3, $4, $5, ${timestampFromMs("$6")}, $7)`;
const DESTINATION_NAME = `SELECT name FROM "AlertDestination" WHERE id = $1 FOR UPDATE`;
const FAIL_PENDING = `UPDATE "AlertOutbox" SET state = 'failed', "lastError" = 'destination deleted', "lastAttemptAt" = ${timestampFromMs("$2")} WHERE "destinationId" = $1 AND state = 'pending'`;
const INSERT_RULE = `INSERT INTO "AlertRule" (id, "destinationId", event, threshold, "createdAt", "createdBy") VALUES ($1, $2, $3, $4, ${timestampFromMs("$5")}, $6)`;
const ENQUEUE_TEST = `INSERT INTO "AlertOutbox" ("dedupeKey", "ruleId", "destinationId", event, alert, state, attempts, "createdAt", "nextAttemptAt")
  VALUES ($1, NULL, $2, 'test', $3, 'pending', 0, ${timestampFromMs("$4")}, ${timestampFromMs("$4")}) RETURNING id`;
const SILENCE = `UPDATE "Incident" SET "silencedUntil" = ${timestampFromMs("$1")} WHERE id = $2 AND state != 'forming'`;
const PRUNABLE = `SELECT id FROM "AlertOutbox" WHERE "createdAt" < ${timestampFromMs("$1")} AND state != 'pending' ORDER BY "createdAt" LIMIT $2`;

export async function createAlertDestination(d: { name: string; url: string; format: AlertFormat; secret: string; createdBy: string }, now: number): Promise<string> {
  const id = `dst-${crypto.randomUUID()}`;
  await pool().query(INSERT_DESTINATION, [id, d.name, d.url, d.format, d.secret, now, d.createdBy]);
  return id;
}

export async function deleteAlertDestination(id: string, now: number): Promise<string | null> {
  return inTransaction(async (client) => {
    const name = (await client.query<{ name: string }>(DESTINATION_NAME, [id])).rows[0]?.name;
    if (name === undefined) return null;
    await client.query(`DELETE FROM "AlertRule" WHERE "destinationId" = $1`, [id]);
    await client.query(FAIL_PENDING, [id, now]);
    await client.query(`DELETE FROM "AlertDestination" WHERE id = $1`, [id]);
    return name;
  });
}

export async function createAlertRule(r: { destinationId: string; event: string; threshold: number | null; createdBy: string }, now: number): Promise<string> {
  const id = `rule-${crypto.randomUUID()}`;
  await pool().query(INSERT_RULE, [id, r.destinationId, r.event, r.threshold, now, r.createdBy]);
  return id;
}

export async function deleteAlertRule(id: string): Promise<boolean> {
  return ((await pool().query(`DELETE FROM "AlertRule" WHERE id = $1`, [id])).rowCount ?? 0) > 0;
}

export async function enqueueTestAlert(destinationId: string, alert: Alert, now: number): Promise<number> {
  const { key, ...body } = alert;
  return (await pool().query<{ id: number }>(ENQUEUE_TEST, [key, destinationId, JSON.stringify(body), now])).rows[0].id;
}

export async function silenceIncident(id: string, minutes: number, now: number): Promise<{ until: number | null } | null> {
  const until = minutes ? now + minutes * 60_000 : null;
  return ((await pool().query(SILENCE, [until, id])).rowCount ?? 0) > 0 ? { until } : null;
}

export async function pruneAlerts(cutoff: number, limit: number): Promise<number> {
  return inTransaction(async (client) => {
    const ids = (await client.query<{ id: number }>(PRUNABLE, [cutoff, limit])).rows.map((row) => row.id);
    if (!ids.length) return 0;
    await client.query(`DELETE FROM "AlertDelivery" WHERE "outboxId" = ANY($1::int[])`, [ids]);
    return (await client.query(`DELETE FROM "AlertOutbox" WHERE id = ANY($1::int[])`, [ids])).rowCount ?? 0;
  });
}
