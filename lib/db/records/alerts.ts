import type { AlertState } from "@/lib/alerts/delivery";
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
