import type { GuardState } from "../records/sign-in-guard";
import { inTransaction, pool } from "./pool";
import { msFromTimestamp, timestampFromMs } from "./time";

/** lib/db/sign-in-guard.ts on PostgreSQL: the same exports, answers and rules. */
const STATE = `failures, ${msFromTimestamp(`"lockedUntil"`)} AS "lockedUntil"`;

export async function guardStates(keys: string[]): Promise<Map<string, GuardState>> {
  const { rows } = await pool().query<GuardState & { key: string }>(`SELECT key, ${STATE} FROM "SignInGuard" WHERE key = ANY($1)`, [keys]);
  const byKey = new Map(rows.map(({ key, ...state }) => [key, state]));
  const out = new Map<string, GuardState>();
  for (const key of keys) if (byKey.has(key)) out.set(key, byKey.get(key)!);
  return out;
}

export async function countFailure(keys: string[], now: number, lockFor: (key: string, failures: number) => number | null): Promise<Map<string, GuardState>> {
  // One transaction: the count and the lockout it causes are seen together or not at all.
  return inTransaction(async (client) => {
    const out = new Map<string, GuardState>();
    for (const key of keys) {
      const { rows } = await client.query<GuardState>(
        `INSERT INTO "SignInGuard" AS g (key, failures, "lastFailureAt") VALUES ($1, 1, ${timestampFromMs("$2")})
         ON CONFLICT (key) DO UPDATE SET failures = g.failures + 1, "lastFailureAt" = excluded."lastFailureAt"
         RETURNING ${STATE}`,
        [key, now],
      );
      const row = rows[0];
      const lock = lockFor(key, row.failures);
      if (lock !== null) {
        await client.query(`UPDATE "SignInGuard" SET "lockedUntil" = ${timestampFromMs("$1")} WHERE key = $2`, [now + lock, key]);
        row.lockedUntil = now + lock;
      }
      out.set(key, row);
    }
    return out;
  });
}

export async function clearGuards(keys: string[]): Promise<number> {
  return (await pool().query(`DELETE FROM "SignInGuard" WHERE key = ANY($1)`, [keys])).rowCount ?? 0;
}

export async function lockedGuards(now = Date.now()): Promise<{ key: string; failures: number; lockedUntil: number }[]> {
  const { rows } = await pool().query<{ key: string; failures: number; lockedUntil: number }>(
    `SELECT key, ${STATE} FROM "SignInGuard" WHERE "lockedUntil" > ${timestampFromMs("$1")} ORDER BY key COLLATE "C"`,
    [now],
  );
  return rows;
}
