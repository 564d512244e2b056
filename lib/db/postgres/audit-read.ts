import type { Clause } from "../thread-filter";
import { auditClause, auditPaging, toAuditPage, type AuditFilter, type AuditRow } from "../records/audit";
import { asciiLower, at, ms, rowsOf } from "./sql";

/** The reads of lib/db/audit.ts on PostgreSQL (its writes are the write path's). */


/** auditWhere of lib/db/audit.ts. */
export function auditWhere(filter: AuditFilter): Clause {
  return auditClause(filter, { contains: (column) => `strpos(${asciiLower(column)}, ${asciiLower("?::text")}) > 0`, time: at(), always: "TRUE" });
}

export const AUDIT_SELECT = `id, ${ms("at")}, actor, action, target, reason, result, detail`;

export async function listAudit(filter: AuditFilter & { page?: number; pageSize?: number }) {
  const paging = auditPaging(filter);
  const where = auditWhere(filter);
  const [rows, [{ n: total }], actions] = await Promise.all([
    rowsOf<AuditRow>(`SELECT ${AUDIT_SELECT} FROM "AuditEntry" WHERE ${where.sql} ORDER BY at DESC, id DESC LIMIT ? OFFSET ?`, [
      ...where.params,
      paging.pageSize,
      (paging.page - 1) * paging.pageSize,
    ]),
    rowsOf<{ n: number }>(`SELECT count(*) AS n FROM "AuditEntry" WHERE ${where.sql}`, where.params),
    rowsOf<{ action: string }>(`SELECT action FROM "AuditEntry" GROUP BY action ORDER BY action COLLATE "C"`, []),
  ]);
  return toAuditPage(rows, total, paging, actions.map((a) => a.action));
}
