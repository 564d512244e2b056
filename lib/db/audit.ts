import { db, serialized } from "./client";
import type { AuditInput } from "./records/audit";
import * as postgres from "./postgres/audit";
import { statement } from "./statement";
import { onEitherStore } from "./store";

export type { AuditInput } from "./records/audit";

/** The audit log: who did what, when, why and with which result. */

const INSERT = `INSERT INTO "AuditEntry" (at, actor, action, target, reason, result, detail) VALUES (?, ?, ?, ?, ?, ?, ?)`;

/** The audit statements of a unit of work (see unit-of-work.ts): an action commits with its audit row. */
export const auditRows = {
  insertAudit(entry: AuditInput): void {
    statement(INSERT).run(entry.at, entry.actor, entry.action, entry.target ?? null, entry.reason ?? null, entry.result, entry.detail ?? null);
  },
};

const sqlite = {
  /** Records one entry, or several in one transaction, outside any other unit of work. */
  recordAudit(entries: AuditInput | AuditInput[]): Promise<void> {
    return serialized(() =>
      db().sql.transaction(() => {
        for (const entry of Array.isArray(entries) ? entries : [entries]) auditRows.insertAudit(entry);
      })(),
    );
  },
};

export const { recordAudit } = onEitherStore(sqlite, postgres);

export interface AuditFilter {
  actor?: string;
  action?: string;
  /** A substring of the target, reason or detail (ASCII case-insensitive). */
  q?: string;
  /** Epoch ms, [from, to). */
  from?: number;
  to?: number;
}

/** The one WHERE clause of the audit page and the audit export. */
export function auditWhere(filter: AuditFilter): { sql: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  const add = (clause: string, ...values: unknown[]) => {
    clauses.push(clause);
    params.push(...values);
  };
  if (filter.actor) add("actor = ?", filter.actor);
  if (filter.action) add("action = ?", filter.action);
  if (filter.q) {
    const columns = ["target", "reason", "detail"];
    add(`(${columns.map((c) => `instr(lower(coalesce(${c}, '')), lower(?)) > 0`).join(" OR ")})`, ...columns.map(() => filter.q));
  }
  if (filter.from !== undefined) add("at >= ?", filter.from);
  if (filter.to !== undefined) add("at < ?", filter.to);
  return { sql: clauses.length ? clauses.join(" AND ") : "1", params };
}

export interface AuditRow {
  id: number;
  at: number;
  actor: string;
  action: string;
  target: string | null;
  reason: string | null;
  result: string;
  detail: string | null;
}

/** A page of the audit log, newest first, with the total and every action ever recorded (the filter's choices). */
export function listAudit(filter: AuditFilter & { page?: number; pageSize?: number }) {
  const pageSize = Math.min(200, Math.max(1, filter.pageSize ?? 50));
  const page = Math.max(1, filter.page ?? 1);
  const where = auditWhere(filter);
  return serialized(() => {
    const rows = statement(`SELECT * FROM "AuditEntry" WHERE ${where.sql} ORDER BY at DESC, id DESC LIMIT ? OFFSET ?`).all(
      ...where.params, pageSize, (page - 1) * pageSize,
    ) as AuditRow[];
    const total = (statement(`SELECT count(*) AS n FROM "AuditEntry" WHERE ${where.sql}`).get(...where.params) as { n: number }).n;
    const actions = statement(`SELECT DISTINCT action FROM "AuditEntry" ORDER BY action`).all() as { action: string }[];
    return {
      entries: rows.map((row) => ({ ...row, at: new Date(row.at).toISOString() })),
      total,
      page,
      pageSize,
      actions: actions.map((a) => a.action),
    };
  });
}
