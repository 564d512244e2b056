import { db, serialized } from "./client";
import * as postgresReads from "./postgres/audit-read";
import * as postgres from "./postgres/audit";
import { auditClause, auditPaging, toAuditPage, type AuditFilter, type AuditInput, type AuditRow } from "./records/audit";
import { statement } from "./statement";
import { onEitherStore } from "./store";

export type { AuditFilter, AuditInput, AuditRow } from "./records/audit";

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


/** The one WHERE clause of the audit page and the audit export. */
export function auditWhere(filter: AuditFilter): { sql: string; params: unknown[] } {
  return auditClause(filter, { contains: (column) => `instr(lower(${column}), lower(?)) > 0`, time: "?", always: "1" });
}


/** A page of the audit log, newest first, with the total and every action ever recorded (the filter's choices). */
function listAuditOnSqlite(filter: AuditFilter & { page?: number; pageSize?: number }) {
  const paging = auditPaging(filter);
  const where = auditWhere(filter);
  return serialized(() => {
    const rows = statement(`SELECT * FROM "AuditEntry" WHERE ${where.sql} ORDER BY at DESC, id DESC LIMIT ? OFFSET ?`).all(
      ...where.params, paging.pageSize, (paging.page - 1) * paging.pageSize,
    ) as AuditRow[];
    const total = (statement(`SELECT count(*) AS n FROM "AuditEntry" WHERE ${where.sql}`).get(...where.params) as { n: number }).n;
    const actions = statement(`SELECT DISTINCT action FROM "AuditEntry" ORDER BY action`).all() as { action: string }[];
    return toAuditPage(rows, total, paging, actions.map((a) => a.action));
  });
}

export const { listAudit } = onEitherStore({ listAudit: listAuditOnSqlite }, { listAudit: postgresReads.listAudit });
