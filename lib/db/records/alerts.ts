import type { AlertFormat } from "@/lib/alerts/body";
import type { AlertState } from "@/lib/alerts/delivery";
import type { Alert, RaisedCondition } from "@/lib/alerts/rules";
import type { AlertAttemptView, AlertsOverview } from "@/lib/wire/types";
import type { AuditInput } from "./audit";

/** An alert's delivery attempt as both stores record it (lib/db/alerts.ts, lib/db/postgres/alerts.ts). */
export interface DeliveryAttempt {
  id: number;
  destination: string;
  event: string;
  at: number;
  status: number | null;
  error: string | null;
  durationMs: number;
  state: AlertState;
  /** The next attempt while pending; a delivered or failed alert keeps the time its last attempt was due. */
  nextAttemptAt: number;
}

/** The audit row recorded with a delivery attempt. */
export function alertAttemptAudit({ destination, event, ...row }: DeliveryAttempt): AuditInput {
  const answer = row.status === null ? (row.error ?? "no answer") : `HTTP ${row.status}${row.error ? `: ${row.error}` : ""}`;
  const detail = row.state === "pending" ? `${answer}; next attempt ${new Date(row.nextAttemptAt).toISOString()}` : answer;
  return { at: row.at, actor: "alerts", action: "alert.deliver", target: `${destination}: ${event} #${row.id}`, result: row.state, detail };
}

/** The Alerts page's rows as both stores read them (times in epoch ms), and the page made of them. */

export interface OutboxRow {
  id: number;
  destinationId: string;
  destination: string | null;
  event: string;
  alert: string;
  state: AlertState;
  attempts: number;
  createdAt: number;
  nextAttemptAt: number;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: number | null;
}

export interface DeliveryRow {
  outboxId: number;
  at: number;
  status: number | null;
  error: string | null;
  result: AlertAttemptView["result"];
  durationMs: number;
}

const isoOrNull = (ms: number | null) => (ms == null ? null : new Date(ms).toISOString());

export function toAlertsOverview(
  rows: {
    outbox: OutboxRow[];
    deliveries: DeliveryRow[];
    destinations: { createdAt: number }[];
    rules: { createdAt: number }[];
    conditions: RaisedCondition[];
  },
  now: number,
): AlertsOverview {
  const attempts = new Map<number, AlertAttemptView[]>();
  for (const a of rows.deliveries) {
    const list = attempts.get(a.outboxId) ?? [];
    list.push({ at: isoOrNull(a.at)!, status: a.status, error: a.error, result: a.result, durationMs: a.durationMs });
    attempts.set(a.outboxId, list);
  }
  return {
    destinations: rows.destinations.map((d) => ({ ...d, createdAt: isoOrNull(d.createdAt)! })) as AlertsOverview["destinations"],
    rules: rows.rules.map((r) => ({ ...r, createdAt: isoOrNull(r.createdAt)! })) as AlertsOverview["rules"],
    outbox: rows.outbox.map((o) => ({
      id: o.id,
      destinationId: o.destinationId,
      destination: o.destination ?? "(deleted)",
      event: o.event,
      state: o.state,
      text: (JSON.parse(o.alert) as { text: string }).text,
      attempts: o.attempts,
      createdAt: isoOrNull(o.createdAt)!,
      nextAttemptAt: isoOrNull(o.nextAttemptAt)!,
      lastStatus: o.lastStatus,
      lastError: o.lastError,
      deliveredAt: isoOrNull(o.deliveredAt),
      history: attempts.get(o.id) ?? [],
    })),
    conditions: rows.conditions.map((c) => ({ key: c.key, event: c.event, subject: c.subject, raisedAt: isoOrNull(c.raisedAt)! })),
    serverTime: new Date(now).toISOString(),
  };
}

/** An alert due for delivery, with its destination. */
export interface DueAlert {
  id: number;
  alert: Omit<Alert, "key">;
  attempts: number;
  destinationId: string;
  destination: string;
  url: string;
  format: AlertFormat;
  secret: string;
}
