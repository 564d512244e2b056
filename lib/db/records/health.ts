/** Whether the database answers, and what it is (for the health check and preflight). */
export interface DatabaseHealth {
  ok: boolean;
  path?: string;
  journalMode?: string;
  migrations?: number;
  sqliteVersion?: string;
  postgresVersion?: string;
  error?: string;
}
