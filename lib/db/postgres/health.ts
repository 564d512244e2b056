import type { DatabaseHealth } from "../records/health";
import { MIGRATIONS_TABLE } from "../migrate";
import { pool } from "./pool";

/** lib/db/health.ts on PostgreSQL: never the URL (it may carry a password), only what answers. */
export async function databaseHealth(): Promise<DatabaseHealth> {
  try {
    const { rows } = await pool().query<{ version: string; migrations: number }>(
      `SELECT current_setting('server_version') AS version, (SELECT count(*) FROM "${MIGRATIONS_TABLE}") AS migrations`,
    );
    return { ok: true, migrations: rows[0].migrations, postgresVersion: rows[0].version };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}
