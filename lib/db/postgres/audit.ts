import type pg from "pg";
import type { AuditInput } from "../records/audit";
import { inTransaction } from "./pool";
import { timestampFromMs } from "./time";

/** lib/db/audit.ts's unit-of-work statement on PostgreSQL. */
const INSERT = `INSERT INTO "AuditEntry" (at, actor, action, target, reason, result, detail) VALUES (${timestampFromMs("$1")}, $2, $3, $4, $5, $6, $7)`;

export function auditRowsOn(client: pg.ClientBase) {
  return {
    async insertAudit(entry: AuditInput): Promise<void> {
      await client.query(INSERT, [entry.at, entry.actor, entry.action, entry.target ?? null, entry.reason ?? null, entry.result, entry.detail ?? null]);
    },
  };
}

/** lib/db/audit.ts's recordAudit: one entry, or several in one transaction. */
export async function recordAudit(entries: AuditInput | AuditInput[]): Promise<void> {
  await inTransaction(async (client) => {
    const rows = auditRowsOn(client);
    for (const entry of Array.isArray(entries) ? entries : [entries]) await rows.insertAudit(entry);
  });
}
