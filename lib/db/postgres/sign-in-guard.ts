import type { RecentFailures } from "@/lib/auth/lockout";
import { forgetWhere, type FailureGroup, type Forget } from "../records/sign-in-guard";
import { inTransaction, pool } from "./pool";
import { msFromTimestamp, timestampFromMs } from "./time";

/** lib/db/sign-in-guard.ts on PostgreSQL: the same exports, answers and rules. */
const LAST = `${msFromTimestamp(`max(at)`)} AS last`;

export async function recordSignInFailure(failure: { email: string; address: string; at: number }, forgetBefore: number): Promise<void> {
  await inTransaction(async (client) => {
    await client.query(`DELETE FROM "SignInFailure" WHERE at <= ${timestampFromMs("$1")}`, [forgetBefore]);
    await client.query(`INSERT INTO "SignInFailure" (at, email, address) VALUES (${timestampFromMs("$1")}, $2, $3)`, [failure.at, failure.email, failure.address]);
  });
}

export async function recentFailures(email: string, address: string, since: number): Promise<RecentFailures> {
  const { rows } = await pool().query<{ kind: keyof RecentFailures; count: number; last: number | null }>(
    `SELECT 'pair' AS kind, count(*)::int AS count, ${LAST} FROM "SignInFailure" WHERE email = $1 AND address = $2 AND at > ${timestampFromMs("$3")}
     UNION ALL SELECT 'account', count(*)::int, ${LAST} FROM "SignInFailure" WHERE email = $1 AND at > ${timestampFromMs("$3")}
     UNION ALL SELECT 'address', count(*)::int, ${LAST} FROM "SignInFailure" WHERE address = $2 AND at > ${timestampFromMs("$3")}`,
    [email, address, since],
  );
  const of = (kind: keyof RecentFailures) => {
    const { count, last } = rows.find((r) => r.kind === kind)!;
    return { count, last };
  };
  return { pair: of("pair"), account: of("account"), address: of("address") };
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
