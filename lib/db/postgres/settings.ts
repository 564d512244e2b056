import { pool } from "./pool";
import { timestampFromMs } from "./time";

/** lib/db/settings.ts on PostgreSQL: the same exports, answers and rules. */

export async function settingOrCreate(key: string, make: () => string, now = Date.now()): Promise<string> {
  await pool().query(`INSERT INTO "Setting" (key, value, "updatedAt") VALUES ($1, $2, ${timestampFromMs("$3")}) ON CONFLICT (key) DO NOTHING`, [key, make(), now]);
  // A second statement, not a CTE: it sees a row another caller committed while this insert waited.
  const { rows } = await pool().query<{ value: string }>(`SELECT value FROM "Setting" WHERE key = $1`, [key]);
  return rows[0].value;
}

export async function readSetting(key: string): Promise<string | null> {
  const { rows } = await pool().query<{ value: string }>(`SELECT value FROM "Setting" WHERE key = $1`, [key]);
  return rows[0]?.value ?? null;
}

export async function writeSetting(key: string, value: string, now = Date.now()): Promise<void> {
  await pool().query(
    `INSERT INTO "Setting" (key, value, "updatedAt") VALUES ($1, $2, ${timestampFromMs("$3")})
     ON CONFLICT (key) DO UPDATE SET value = excluded.value, "updatedAt" = excluded."updatedAt"`,
    [key, value, now],
  );
}

export async function takeSetting(key: string, value: string): Promise<boolean> {
  const { rowCount } = await pool().query(`DELETE FROM "Setting" WHERE key = $1 AND value = $2`, [key, value]);
  return rowCount === 1;
}

export async function deleteSetting(key: string): Promise<boolean> {
  const { rowCount } = await pool().query(`DELETE FROM "Setting" WHERE key = $1`, [key]);
  return rowCount === 1;
}
