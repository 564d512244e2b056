import { db, serialized } from "./client";
import { statement } from "./statement";

/** The audit log: who did what, when, why and with which result. */

export interface AuditInput {
  at: number;
  actor: string;
  action: string;
  target?: string | null;
  reason?: string | null;
  result: string;
  detail?: string | null;
}

const INSERT = `INSERT INTO "AuditEntry" (at, actor, action, target, reason, result, detail) VALUES (?, ?, ?, ?, ?, ?, ?)`;

/** The audit statements of a unit of work (see unit-of-work.ts): an action commits with its audit row. */
export const auditRows = {
  insertAudit(entry: AuditInput): void {
    statement(INSERT).run(entry.at, entry.actor, entry.action, entry.target ?? null, entry.reason ?? null, entry.result, entry.detail ?? null);
  },
};

/** Records one entry, or several in one transaction, outside any other unit of work. */
export function recordAudit(entries: AuditInput | AuditInput[]): Promise<void> {
  return serialized(() =>
    db().sql.transaction(() => {
      for (const entry of Array.isArray(entries) ? entries : [entries]) auditRows.insertAudit(entry);
    })(),
  );
}

export interface AuditFilter {
  actor?: string;
  action?: string;
  q?: string;
  page?: number;
  pageSize?: number;
}

export async function listAudit(filter: AuditFilter) {
  const pageSize = Math.min(200, Math.max(1, filter.pageSize ?? 50));
  const page = Math.max(1, filter.page ?? 1);
  const where = {
    ...(filter.actor ? { actor: filter.actor } : {}),
    ...(filter.action ? { action: filter.action } : {}),
    ...(filter.q
      ? { OR: [{ target: { contains: filter.q } }, { reason: { contains: filter.q } }, { detail: { contains: filter.q } }] }
      : {}),
  };
  const { prisma } = db();
  const [rows, total, actions] = await Promise.all([
    prisma.auditEntry.findMany({ where, orderBy: [{ at: "desc" }, { id: "desc" }], skip: (page - 1) * pageSize, take: pageSize }),
    prisma.auditEntry.count({ where }),
    prisma.auditEntry.findMany({ distinct: ["action"], select: { action: true }, orderBy: { action: "asc" } }),
  ]);
  return {
    entries: rows.map((row) => ({ ...row, at: row.at.toISOString() })),
    total,
    page,
    pageSize,
    actions: actions.map((a) => a.action),
  };
}
