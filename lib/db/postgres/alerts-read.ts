import type { Alert, Observations, RaisedCondition, ThreadTransition } from "@/lib/alerts/rules";
import type { AlertsOverview } from "@/lib/wire/types";
import { toAlertsOverview, type DeliveryRow, type DueAlert, type OutboxRow } from "../records/alerts";
import { at, ms, rowsOf, snapshotRead } from "./sql";
import { notJoinedSql, stalledSql } from "./thread-filter";
import { msFromTimestamp } from "./time";

/**
 * The reads of lib/db/alerts.ts on PostgreSQL: the Alerts page and what the delivery worker and
 * the alert conditions read (the outbox's writes are the write path's). Rows without an order of
 * their own on SQLite (its row order) come in the order they were made here.
 */

const RAISED = `SELECT key, event, subject, ${ms(`"raisedAt"`)} FROM "AlertCondition" ORDER BY "AlertCondition"."raisedAt", key COLLATE "C"`;
const DUE = `SELECT o.id, o.alert, o.attempts, d.id AS "destinationId", d.name AS destination, d.url, d.format, d.secret
  FROM "AlertOutbox" o JOIN "AlertDestination" d ON d.id = o."destinationId"
  WHERE o.state = 'pending' AND o."nextAttemptAt" <= ${at()} ORDER BY o."nextAttemptAt", o.id LIMIT ?`;
const SOURCES = `SELECT s.id, s.name, ${ms(`s."lastSeenAt"`)}, ${ms(`s."lastPolledAt"`)}, ${ms(`r."lastSeenAt"`, "learntAt")}, r."usualGapMs"
  FROM "Source" s LEFT JOIN "AlertSourceRhythm" r ON r."sourceId" = s.id ORDER BY s."createdAt", s.id`;
const OPEN_STOPS = `SELECT d.id, t."externalId" AS thread, s.name AS source, ${ms(`d."createdAt"`)} FROM "Directive" d
  JOIN "Thread" t ON t.id = d."threadId" JOIN "Source" s ON s.id = d."sourceId"
  WHERE d.kind = 'interrupt' AND d.state IN ('pending', 'delivered') ORDER BY d."createdAt" LIMIT 100`;
const LIMITS = `SELECT w."sourceId", s.name AS source, w.provider, w.account, w."window", w."usedPercent" FROM "LimitWindow" w JOIN "Source" s ON s.id = w."sourceId"
  ORDER BY w."sourceId" COLLATE "C", w.account COLLATE "C", w.provider COLLATE "C", w."window" COLLATE "C"`;
// The last stored event stands for the thread's last applied one: a stall has none after it.
const STALLED = `SELECT t.id AS key, t."externalId", t.title, t.status AS "statusBefore", 'stalled' AS status,
    coalesce((SELECT max(e.id) FROM "Event" e WHERE e."threadId" = t.id), 0) AS "lastSeq"
  FROM "Thread" t WHERE ${stalledSql("t")} AND ${notJoinedSql("t")} ORDER BY t."deadlineAt" LIMIT ?`;

export async function dueAlerts(now: number, limit: number): Promise<DueAlert[]> {
  const rows = await rowsOf<Omit<DueAlert, "alert"> & { alert: string }>(DUE, [now, limit]);
  return rows.map((row) => ({ ...row, alert: JSON.parse(row.alert) as Omit<Alert, "key"> }));
}

export async function nextAlertDue(): Promise<number | null> {
  return (await rowsOf<{ at: number | null }>(`SELECT ${msFromTimestamp(`min("nextAttemptAt")`)} AS at FROM "AlertOutbox" WHERE state = 'pending'`, []))[0].at;
}

export function alertObservations(): Promise<{ observed: Observations; learnt: Map<string, number | null>; thresholds: number[]; ruleEvents: Set<string>; raised: RaisedCondition[] }> {
  return snapshotRead(async (db) => {
    type SourceRow = Observations["sources"][number] & { learntAt: number | null };
    const sources = await rowsOf<SourceRow>(SOURCES, [], db);
    const [{ oldest }] = await rowsOf<{ oldest: number | null }>(`SELECT ${msFromTimestamp(`min("createdAt")`)} AS oldest FROM "AlertOutbox" WHERE state = 'pending'`, [], db);
    const thresholds = await rowsOf<{ threshold: number }>(`SELECT DISTINCT threshold FROM "AlertRule" WHERE event = 'limit.above' AND threshold IS NOT NULL ORDER BY threshold`, [], db);
    const events = await rowsOf<{ event: string }>(`SELECT DISTINCT event FROM "AlertRule"`, [], db);
    return {
      observed: {
        sources: sources.map(({ learntAt: _learnt, ...s }) => s),
        stops: await rowsOf<Observations["stops"][number]>(OPEN_STOPS, [], db),
        oldestPendingAt: oldest,
        limits: await rowsOf<Observations["limits"][number]>(LIMITS, [], db),
      },
      learnt: new Map(sources.map((s) => [s.id, s.learntAt])),
      thresholds: thresholds.map((row) => row.threshold),
      ruleEvents: new Set(events.map((row) => row.event)),
      raised: await rowsOf<RaisedCondition>(RAISED, [], db),
    };
  });
}

export function stalledThreads(deadlineBefore: number, limit = 100): Promise<ThreadTransition[]> {
  return rowsOf<ThreadTransition>(STALLED, [deadlineBefore, limit]);
}

export async function alertsNotQueued(alerts: readonly Alert[]): Promise<Alert[]> {
  if (!alerts.length) return [];
  const rows = await rowsOf<{ key: string }>(`SELECT DISTINCT "dedupeKey" AS key FROM "AlertOutbox" WHERE "dedupeKey" = ANY(?::text[])`, [alerts.map((a) => a.key)]);
  const present = new Set(rows.map((row) => row.key));
  return alerts.filter((a) => !present.has(a.key));
}

export async function alertDestinationName(id: string): Promise<string | null> {
  return (await rowsOf<{ name: string }>(`SELECT name FROM "AlertDestination" WHERE id = ?`, [id]))[0]?.name ?? null;
}

export function alertsOverview(now: number, limit = 100): Promise<AlertsOverview> {
  return snapshotRead(async (db) => {
    const outbox = await rowsOf<OutboxRow>(
      `SELECT o.id, o."destinationId", d.name AS destination, o.event, o.alert, o.state, o.attempts, ${ms(`o."createdAt"`)}, ${ms(`o."nextAttemptAt"`)},
         o."lastStatus", o."lastError", ${ms(`o."deliveredAt"`)}
       FROM "AlertOutbox" o LEFT JOIN "AlertDestination" d ON d.id = o."destinationId" ORDER BY o.id DESC LIMIT ?`,
      [limit],
      db,
    );
    return toAlertsOverview(
      {
        outbox,
        deliveries: await rowsOf<DeliveryRow>(
          `SELECT id, "outboxId", ${ms("at")}, status, error, result, "durationMs" FROM "AlertDelivery" WHERE "outboxId" = ANY(?::int[]) ORDER BY id`,
          [outbox.map((o) => o.id)],
          db,
        ),
        destinations: await rowsOf<{ createdAt: number }>(
          `SELECT id, name, url, format, ${ms(`"createdAt"`)}, "createdBy" FROM "AlertDestination" ORDER BY "AlertDestination"."createdAt", id COLLATE "C"`,
          [],
          db,
        ),
        rules: await rowsOf<{ createdAt: number }>(
          `SELECT id, "destinationId", event, threshold, ${ms(`"createdAt"`)}, "createdBy" FROM "AlertRule" ORDER BY "AlertRule"."createdAt", id COLLATE "C"`,
          [],
          db,
        ),
        conditions: await rowsOf<RaisedCondition>(RAISED, [], db),
      },
      now,
    );
  });
}
