import type { Alert, Observations, RaisedCondition, ThreadTransition } from "@/lib/alerts/rules";
import type { AlertFormat } from "@/lib/alerts/body";
import type { AlertState } from "@/lib/alerts/delivery";
import type { AlertsOverview } from "@/lib/wire/types";
import { auditRows } from "./audit";
import { serialized, writeTransaction } from "./client";
import * as postgresReads from "./postgres/alerts-read";
import * as postgres from "./postgres/alerts";
import { alertAttemptAudit, toAlertsOverview, type DeliveryAttempt, type DeliveryRow, type DueAlert, type OutboxRow } from "./records/alerts";
import { isoOrNull, pluck, statement } from "./statement";
import { onEitherStore } from "./store";

export type { DeliveryAttempt, DueAlert } from "./records/alerts";
import { notJoinedSql, stalledSql } from "./thread-filter";

/**
 * Alerts: destinations, rules, the durable outbox and its delivery attempts, and the conditions
 * currently raised. An alert is written into the outbox in the unit of work of the fact that
 * raised it (one row per rule that asks for it), unique per (key, destination), so the same fact
 * or condition episode never reaches a destination twice. The worker (lib/server/alert-delivery.ts)
 * delivers and records each attempt here.
 */

const ENQUEUE = `INSERT OR IGNORE INTO "AlertOutbox" (dedupeKey, ruleId, destinationId, event, alert, state, attempts, createdAt, nextAttemptAt)
  SELECT @key, r.id, r.destinationId, @event, @alert, 'pending', 0, @now, @now FROM "AlertRule" r JOIN "AlertDestination" d ON d.id = r.destinationId
  WHERE r.event = @event AND (@threshold IS NULL OR r.threshold = @threshold)
    AND NOT EXISTS (SELECT 1 FROM "Incident" i WHERE i.id = @incident AND i.silencedUntil > @now)`;
const ENQUEUE_TEST = `INSERT INTO "AlertOutbox" (dedupeKey, ruleId, destinationId, event, alert, state, attempts, createdAt, nextAttemptAt)
  VALUES (?, NULL, ?, 'test', ?, 'pending', 0, ?, ?)`;
const SOURCE_NAMES = `SELECT id, name FROM "Source" WHERE id IN (SELECT value FROM json_each(?))`;
const DUE = `SELECT o.id, o.alert, o.attempts, d.id AS destinationId, d.name AS destination, d.url, d.format, d.secret
  FROM "AlertOutbox" o JOIN "AlertDestination" d ON d.id = o.destinationId
  WHERE o.state = 'pending' AND o.nextAttemptAt <= ? ORDER BY o.nextAttemptAt, o.id LIMIT ?`;
const NEXT_DUE = `SELECT min(nextAttemptAt) FROM "AlertOutbox" WHERE state = 'pending'`;
const RECORD = `UPDATE "AlertOutbox" SET state = @state, attempts = attempts + 1, lastAttemptAt = @at, lastStatus = @status, lastError = @error,
  nextAttemptAt = CASE WHEN @state = 'pending' THEN @nextAttemptAt ELSE nextAttemptAt END, deliveredAt = @deliveredAt WHERE id = @id`;
const ATTEMPT = `INSERT INTO "AlertDelivery" (outboxId, at, status, error, result, durationMs) VALUES (@id, @at, @status, @error, @state, @durationMs)`;
const RAISED = `SELECT key, event, subject, raisedAt FROM "AlertCondition"`;
const RAISE = `INSERT OR IGNORE INTO "AlertCondition" (key, event, raisedAt, subject) VALUES (?, ?, ?, ?)`;
const CLEAR = `DELETE FROM "AlertCondition" WHERE key = ?`;
const SOURCES = `SELECT s.id, s.name, s.lastSeenAt, s.lastPolledAt, r.lastSeenAt AS learntAt, r.usualGapMs FROM "Source" s LEFT JOIN "AlertSourceRhythm" r ON r.sourceId = s.id`;
const LEARN = `INSERT INTO "AlertSourceRhythm" (sourceId, lastSeenAt, usualGapMs) VALUES (?, ?, ?)
  ON CONFLICT (sourceId) DO UPDATE SET lastSeenAt = excluded.lastSeenAt, usualGapMs = excluded.usualGapMs`;
const OPEN_STOPS = `SELECT d.id, t.externalId AS thread, s.name AS source, d.createdAt FROM "Directive" d JOIN "Thread" t ON t.id = d.threadId JOIN "Source" s ON s.id = d.sourceId
  WHERE d.kind = 'interrupt' AND d.state IN ('pending', 'delivered') ORDER BY d.createdAt LIMIT 100`;
const OLDEST_PENDING = `SELECT min(createdAt) FROM "AlertOutbox" WHERE state = 'pending'`;
const LIMITS = `SELECT w.sourceId, s.name AS source, w.provider, w.account, w.window, w.usedPercent FROM "LimitWindow" w JOIN "Source" s ON s.id = w.sourceId`;
const THRESHOLDS = `SELECT DISTINCT threshold FROM "AlertRule" WHERE event = 'limit.above' AND threshold IS NOT NULL`;
const RULE_EVENTS = `SELECT DISTINCT event FROM "AlertRule"`;
// The last stored event stands for the thread's last applied one: a stall has none after it.
const STALLED = `SELECT t.id AS key, t.externalId, t.title, t.status AS statusBefore, 'stalled' AS status,
    coalesce((SELECT max(e.id) FROM "Event" e WHERE e.threadId = t.id), 0) AS lastSeq
  FROM "Thread" t WHERE ${stalledSql("t")} AND ${notJoinedSql("t")} ORDER BY t.deadlineAt LIMIT ?`;
const KEYS_PRESENT = `SELECT DISTINCT dedupeKey FROM "AlertOutbox" WHERE dedupeKey IN (SELECT value FROM json_each(?))`;
const SILENCE = `UPDATE "Incident" SET silencedUntil = ? WHERE id = ? AND state != 'forming'`;

/** The store statements of a unit of work (see unit-of-work.ts): alerts commit with the facts that raised them. */
export const alertRows = {
  /** Writes an alert for every rule that asks for it (an incident's own alerts not while it is silenced); returns how many. */
  enqueueAlerts(alerts: readonly Alert[], now: number): number {
    let written = 0;
    for (const { key, threshold, ...alert } of alerts) {
      const incident = alert.event.startsWith("incident.") ? alert.subject : null;
      written += statement(ENQUEUE).run({ key, event: alert.event, alert: JSON.stringify(alert), threshold: threshold ?? null, incident, now }).changes;
    }
    return written;
  },
  sourceNames(ids: readonly string[]): Map<string, string> {
    if (!ids.length) return new Map();
    return new Map((statement(SOURCE_NAMES).all(JSON.stringify(ids)) as { id: string; name: string }[]).map((r) => [r.id, r.name]));
  },
  /** One attempt and its outcome, with its audit row. */
  recordAlertAttempt(attempt: DeliveryAttempt): void {
    const { destination: _destination, event: _event, ...row } = attempt;
    statement(RECORD).run({ ...row, deliveredAt: row.state === "delivered" ? row.at : null });
    statement(ATTEMPT).run(row);
    auditRows.insertAudit(alertAttemptAudit(attempt));
  },
  raiseCondition(condition: { key: string; event: string; subject: string }, now: number): void {
    statement(RAISE).run(condition.key, condition.event, now, condition.subject);
  },
  clearCondition(key: string): void {
    statement(CLEAR).run(key);
  },
  learnSourceRhythm(sourceId: string, lastSeenAt: number, usualGapMs: number | null): void {
    statement(LEARN).run(sourceId, lastSeenAt, usualGapMs);
  },
};

/** An alert due for delivery, with where it goes. */

function dueAlertsOnSqlite(now: number, limit: number): Promise<DueAlert[]> {
  return serialized(() =>
    (statement(DUE).all(now, limit) as (Omit<DueAlert, "alert"> & { alert: string })[]).map((row) => ({ ...row, alert: JSON.parse(row.alert) as Omit<Alert, "key"> })),
  );
}

/** When the earliest pending alert is due; null when none is pending. */
function nextAlertDueOnSqlite(): Promise<number | null> {
  return serialized(() => pluck(NEXT_DUE).get() as number | null);
}

/** What the alert conditions are judged on, with the events some rule asks for. */
function alertObservationsOnSqlite(): Promise<{ observed: Observations; learnt: Map<string, number | null>; thresholds: number[]; ruleEvents: Set<string>; raised: RaisedCondition[] }> {
  return serialized(() => {
    const sources = statement(SOURCES).all() as { id: string; name: string; lastSeenAt: number | null; lastPolledAt: number | null; learntAt: number | null; usualGapMs: number | null }[];
    return {
      observed: {
        sources: sources.map(({ learntAt: _learnt, ...s }) => s),
        stops: statement(OPEN_STOPS).all() as Observations["stops"],
        oldestPendingAt: pluck(OLDEST_PENDING).get() as number | null,
        limits: statement(LIMITS).all() as Observations["limits"],
      },
      learnt: new Map(sources.map((s) => [s.id, s.learntAt])),
      thresholds: pluck(THRESHOLDS).all() as number[],
      ruleEvents: new Set(pluck(RULE_EVENTS).all() as string[]),
      raised: statement(RAISED).all() as RaisedCondition[],
    };
  });
}

/** Threads whose retry deadline passed before `deadlineBefore` with no tick ending them yet. */
function stalledThreadsOnSqlite(deadlineBefore: number, limit = 100): Promise<ThreadTransition[]> {
  return serialized(() => statement(STALLED).all(deadlineBefore, limit) as ThreadTransition[]);
}

/** The alerts of these whose key the outbox does not hold yet. */
function alertsNotQueuedOnSqlite(alerts: readonly Alert[]): Promise<Alert[]> {
  if (!alerts.length) return Promise.resolve([]);
  return serialized(() => {
    const present = new Set(pluck(KEYS_PRESENT).all(JSON.stringify(alerts.map((a) => a.key))) as string[]);
    return alerts.filter((a) => !present.has(a.key));
  });
}

function alertDestinationNameOnSqlite(id: string): Promise<string | null> {
  return serialized(() => (pluck(`SELECT name FROM "AlertDestination" WHERE id = ?`).get(id) as string | undefined) ?? null);
}

/** The Alerts page and GET /api/v1/alerts: destinations, rules, the latest alerts and their attempts. */
function alertsOverviewOnSqlite(now: number, limit = 100): Promise<AlertsOverview> {
  return serialized(() => {
    const outbox = statement(
      `SELECT o.*, d.name AS destination FROM "AlertOutbox" o LEFT JOIN "AlertDestination" d ON d.id = o.destinationId ORDER BY o.id DESC LIMIT ?`,
    ).all(limit) as OutboxRow[];
    const ids = JSON.stringify(outbox.map((o) => o.id));
    return toAlertsOverview(
      {
        outbox,
        deliveries: statement(`SELECT * FROM "AlertDelivery" WHERE outboxId IN (SELECT value FROM json_each(?)) ORDER BY id`).all(ids) as DeliveryRow[],
        destinations: statement(`SELECT id, name, url, format, createdAt, createdBy FROM "AlertDestination" ORDER BY createdAt, id`).all() as { createdAt: number }[],
        rules: statement(`SELECT id, destinationId, event, threshold, createdAt, createdBy FROM "AlertRule" ORDER BY createdAt, id`).all() as { createdAt: number }[],
        conditions: statement(RAISED).all() as RaisedCondition[],
      },
      now,
    );
  });
}

/** The admin writes and retention of alerts. */
const sqlite = {
  createAlertDestination(d: { name: string; url: string; format: AlertFormat; secret: string; createdBy: string }, now: number): Promise<string> {
    const id = `dst-${crypto.randomUUID()}`;
    return serialized(() => {
      statement(`INSERT INTO "AlertDestination" (id, name, url, format, secret, createdAt, createdBy) VALUES (?, ?, ?, ?, ?, ?, ?)`).run(id, d.name, d.url, d.format, d.secret, now, d.createdBy);
      return id;
    });
  },

  /** Removes a destination and its rules; its alerts still waiting are marked failed. Returns its name, or null when unknown. */
  deleteAlertDestination(id: string, now: number): Promise<string | null> {
    return writeTransaction(() => {
      const name = pluck(`SELECT name FROM "AlertDestination" WHERE id = ?`).get(id) as string | undefined;
      if (name === undefined) return null;
      statement(`DELETE FROM "AlertRule" WHERE destinationId = ?`).run(id);
      statement(`UPDATE "AlertOutbox" SET state = 'failed', lastError = 'destination deleted', lastAttemptAt = ? WHERE destinationId = ? AND state = 'pending'`).run(now, id);
      statement(`DELETE FROM "AlertDestination" WHERE id = ?`).run(id);
      return name;
    });
  },

  createAlertRule(r: { destinationId: string; event: string; threshold: number | null; createdBy: string }, now: number): Promise<string> {
    const id = `rule-${crypto.randomUUID()}`;
    return serialized(() => {
      statement(`INSERT INTO "AlertRule" (id, destinationId, event, threshold, createdAt, createdBy) VALUES (?, ?, ?, ?, ?, ?)`).run(id, r.destinationId, r.event, r.threshold, now, r.createdBy);
      return id;
    });
  },

  deleteAlertRule(id: string): Promise<boolean> {
    return serialized(() => statement(`DELETE FROM "AlertRule" WHERE id = ?`).run(id).changes > 0);
  },

  /** Queues a test alert for one destination; returns its outbox id. */
  enqueueTestAlert(destinationId: string, alert: Alert, now: number): Promise<number> {
    const { key, ...body } = alert;
    return serialized(() => Number(statement(ENQUEUE_TEST).run(key, destinationId, JSON.stringify(body), now, now).lastInsertRowid));
  },

  /** An operator silences an incident's alerts for `minutes` from `now` (0 lifts it); null when there is no such incident. */
  silenceIncident(id: string, minutes: number, now: number): Promise<{ until: number | null } | null> {
    const until = minutes ? now + minutes * 60_000 : null;
    return serialized(() => (statement(SILENCE).run(until, id).changes > 0 ? { until } : null));
  },

  /**
   * Retention: delivered and failed alerts created before `cutoff` go, with their attempts (at most
   * `limit` per call); pending ones stay whatever their age. Returns how many alerts went.
   */
  pruneAlerts(cutoff: number, limit: number): Promise<number> {
    return writeTransaction(() => {
      const ids = JSON.stringify(pluck(`SELECT id FROM "AlertOutbox" WHERE createdAt < ? AND state != 'pending' ORDER BY createdAt LIMIT ?`).all(cutoff, limit));
      statement(`DELETE FROM "AlertDelivery" WHERE outboxId IN (SELECT value FROM json_each(?))`).run(ids);
      return statement(`DELETE FROM "AlertOutbox" WHERE id IN (SELECT value FROM json_each(?))`).run(ids).changes;
    });
  },
};

export const { createAlertDestination, deleteAlertDestination, createAlertRule, deleteAlertRule, enqueueTestAlert, silenceIncident, pruneAlerts } = onEitherStore(sqlite, postgres);

export const { dueAlerts, nextAlertDue, alertObservations, stalledThreads, alertsNotQueued, alertDestinationName, alertsOverview } = onEitherStore(
  {
    dueAlerts: dueAlertsOnSqlite,
    nextAlertDue: nextAlertDueOnSqlite,
    alertObservations: alertObservationsOnSqlite,
    stalledThreads: stalledThreadsOnSqlite,
    alertsNotQueued: alertsNotQueuedOnSqlite,
    alertDestinationName: alertDestinationNameOnSqlite,
    alertsOverview: alertsOverviewOnSqlite,
  },
  postgresReads,
);
