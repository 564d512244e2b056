/** An audit entry as both stores write it (lib/db/audit.ts, lib/db/postgres/audit.ts). */
export interface AuditInput {
  at: number;
  actor: string;
  action: string;
  target?: string | null;
  reason?: string | null;
  result: string;
  detail?: string | null;
}

/** The audit log's filter and rows, on either store. */

export interface AuditFilter {
  actor?: string;
  action?: string;
  /** A substring of the target, reason or detail (ASCII case-insensitive). */
  q?: string;
  /** Epoch ms, [from, to). */
  from?: number;
  to?: number;
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

/** How a store writes the parts of the audit filter that differ between SQL dialects. */
export interface AuditDialect {
  /** Whether `column` contains the `?` text, ASCII case-insensitive. */
  contains(column: string): string;
  /** A `?` epoch-ms parameter as the `at` column compares with it. */
  time: string;
  /** A clause true of every row. */
  always: string;
}

/** The one WHERE clause of the audit page and the audit export. */
export function auditClause(filter: AuditFilter, dialect: AuditDialect): { sql: string; params: unknown[] } {
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
    add(`(${columns.map((c) => dialect.contains(`coalesce(${c}, '')`)).join(" OR ")})`, ...columns.map(() => filter.q));
  }
  if (filter.from !== undefined) add(`at >= ${dialect.time}`, filter.from);
  if (filter.to !== undefined) add(`at < ${dialect.time}`, filter.to);
  return { sql: clauses.length ? clauses.join(" AND ") : dialect.always, params };
}

/** The page and size of an audit page, bounded. */
export function auditPaging(filter: { page?: number; pageSize?: number }): { page: number; pageSize: number } {
  return { page: Math.max(1, filter.page ?? 1), pageSize: Math.min(200, Math.max(1, filter.pageSize ?? 50)) };
}

/** A page of the audit log, newest first, with the total and every action ever recorded (the filter's choices). */
export function toAuditPage(rows: AuditRow[], total: number, paging: { page: number; pageSize: number }, actions: string[]) {
  return { entries: rows.map((row) => ({ ...row, at: new Date(row.at).toISOString() })), total, ...paging, actions };
}
