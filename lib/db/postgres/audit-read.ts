import type { AuditFilter, AuditRow } from "../audit";
import type { Clause } from "../thread-filter";
import { at, ms, rowsOf } from "./sql";

/** The reads of lib/db/audit.ts on PostgreSQL (its writes are the write path's). */

const ASCII_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
/** SQLite's lower() folds ASCII letters only; so does this. */
const asciiLower = (expr: string) => `translate(${expr}, '${ASCII_UPPER}', '${ASCII_UPPER.toLowerCase()}')`;

/** auditWhere of lib/db/audit.ts. */
export function auditWhere(filter: AuditFilter): Clause {
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
    add(`(${columns.map((c) => `strpos(${asciiLower(`coalesce(${c}, '')`)}, ${asciiLower("?::text")}) > 0`).join(" OR ")})`, ...columns.map(() => filter.q));
  }
  if (filter.from !== undefined) add(`at >= ${at()}`, filter.from);
  if (filter.to !== undefined) add(`at < ${at()}`, filter.to);
  return { sql: clauses.length ? clauses.join(" AND ") : "TRUE", params };
}

export const AUDIT_SELECT = `id, ${ms("at")}, actor, action, target, reason, result, detail`;

export async function listAudit(filter: AuditFilter & { page?: number; pageSize?: number }) {
  const pageSize = Math.min(200, Math.max(1, filter.pageSize ?? 50));
  const page = Math.max(1, filter.page ?? 1);
  const where = auditWhere(filter);
  const [rows, [{ n: total }], actions] = await Promise.all([
    rowsOf<AuditRow>(`SELECT ${AUDIT_SELECT} FROM "AuditEntry" WHERE ${where.sql} ORDER BY at DESC, id DESC LIMIT ? OFFSET ?`, [...where.params, pageSize, (page - 1) * pageSize]),
    rowsOf<{ n: number }>(`SELECT count(*) AS n FROM "AuditEntry" WHERE ${where.sql}`, where.params),
    rowsOf<{ action: string }>(`SELECT action FROM "AuditEntry" GROUP BY action ORDER BY action COLLATE "C"`, []),
  ]);
  return {
    entries: rows.map((row) => ({ ...row, at: new Date(row.at).toISOString() })),
    total,
    page,
    pageSize,
    actions: actions.map((a) => a.action),
  };
}
