import type { RecentFailures } from "@/lib/auth/lockout";
import { forgetWhere, type FailureGroup, type Forget } from "../records/sign-in-guard";
import type pg from "pg";
import { lockSignIns } from "./locks";
import { inTransaction, pool } from "./pool";
import { msFromTimestamp, timestampFromMs } from "./time";

/** lib/db/sign-in-guard.ts on PostgreSQL: the same exports, answers and rules. */
const LAST = `${msFromTimestamp(`max(at)`)} AS last`;

export async function recordSignInFailure(failure: { email: string; address: string; device?: string | null; at: number }, forgetBefore: number): Promise<void> {
  await inTransaction(async (client) => {
    await client.query(`DELETE FROM "SignInFailure" WHERE at <= ${timestampFromMs("$1")}`, [forgetBefore]);
    await client.query(`INSERT INTO "SignInFailure" (at, email, address, device) VALUES (${timestampFromMs("$1")}, $2, $3, $4)`, [failure.at, failure.email, failure.address, failure.device ?? null]);
  });
}

export async function recentFailures(email: string, address: string, since: number, device: string | null = null, client: pg.ClientBase | pg.Pool = pool()): Promise<RecentFailures> {
  const { rows } = await client.query<{ kind: keyof RecentFailures; count: number; last: number | null }>(
    `SELECT 'pair' AS kind, count(*)::int AS count, ${LAST} FROM "SignInFailure" WHERE email = $1 AND address = $2 AND at > ${timestampFromMs("$3")}
     UNION ALL SELECT 'account', count(*)::int, ${LAST} FROM "SignInFailure" WHERE email = $1 AND at > ${timestampFromMs("$3")}
     UNION ALL SELECT 'address', count(*)::int, ${LAST} FROM "SignInFailure" WHERE address = $2 AND at > ${timestampFromMs("$3")}
     UNION ALL SELECT 'device', count(*)::int, ${LAST} FROM "SignInFailure" WHERE email = $1 AND device = $4 AND at > ${timestampFromMs("$3")}`,
    [email, address, since, device],
  );
  const of = (kind: keyof RecentFailures) => {
    const { count, last } = rows.find((r) => r.kind === kind)!;
    return { count, last };
  };
  return { pair: of("pair"), account: of("account"), address: of("address"), device: of("device") };
}

/** Counted and kept under the sign-in lock (locks.ts), so instances do not admit parallel guesses on one count either. */
export async function claimSignInAttempt(
  attempt: { email: string; address: string; device: string | null; at: number },
  since: number,
  admit: (recent: RecentFailures) => boolean,
): Promise<{ recent: RecentFailures; pending: number | null }> {
  return inTransaction(async (client) => {
    await lockSignIns(client);
    await client.query(`DELETE FROM "SignInFailure" WHERE at <= ${timestampFromMs("$1")}`, [since]);
    const recent = await recentFailures(attempt.email, attempt.address, since, attempt.device, client);
    if (!admit(recent)) return { recent, pending: null };
    const { rows } = await client.query<{ id: number }>(
      `INSERT INTO "SignInFailure" (at, email, address, device) VALUES (${timestampFromMs("$1")}, $2, $3, $4) RETURNING id`,
      [attempt.at, attempt.email, attempt.address, attempt.device],
    );
    return { recent, pending: rows[0].id };
  });
}

export async function withdrawSignInAttempt(id: number): Promise<void> {
  await pool().query(`DELETE FROM "SignInFailure" WHERE id = $1`, [id]);
}

export async function failuresSince(since: number): Promise<FailureGroup[]> {
  const { rows } = await pool().query<FailureGroup>(
    `SELECT email, address, count(*)::int AS count, ${LAST} FROM "SignInFailure" WHERE at > ${timestampFromMs("$1")}
     GROUP BY email, address ORDER BY email COLLATE "C", address COLLATE "C"`,
    [since],
  );
  return rows;
}

export async function forgetFailures(of: Forget): Promise<number> {
  const { where, params } = forgetWhere(of, (n) => `$${n}`);
  return (await pool().query(`DELETE FROM "SignInFailure" WHERE ${where}`, params)).rowCount ?? 0;
}
