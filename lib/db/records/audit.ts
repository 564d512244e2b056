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
