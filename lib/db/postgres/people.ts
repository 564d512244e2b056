import type { Role } from "@/lib/auth/roles";
import { toPerson, type PersonRecord, type PersonRow } from "../records/people";
import { inTransaction, pool } from "./pool";
import { msFromTimestamp, timestampFromMs } from "./time";

/**
 * lib/db/people.ts on PostgreSQL: the same exports, answers and rules. Rows are selected in the
 * SQLite module's shape (`banned` 0/1, times in epoch ms) so its mappers serve both.
 */
const COLUMNS = `id, name, email, role, banned::int AS banned, ${msFromTimestamp(`"createdAt"`)} AS "createdAt"`;

async function people(where: string, params: unknown[]): Promise<PersonRow[]> {
  return (await pool().query<PersonRow>(`SELECT ${COLUMNS} FROM "User" ${where}`, params)).rows;
}

export async function countPeople(): Promise<number> {
  return (await pool().query<{ n: number }>(`SELECT count(*) AS n FROM "User"`)).rows[0].n;
}

export async function personById(id: string): Promise<PersonRecord | null> {
  const [row] = await people(`WHERE id = $1`, [id]);
  return row ? toPerson(row) : null;
}

export async function personByEmail(email: string): Promise<PersonRecord | null> {
  const [row] = await people(`WHERE email = $1`, [email.toLowerCase()]);
  return row ? toPerson(row) : null;
}

export async function listPeople(): Promise<PersonRecord[]> {
  return (await people(`ORDER BY email COLLATE "C"`, [])).map(toPerson);
}

export async function setRole(id: string, role: Role, now = Date.now()): Promise<boolean> {
  const { rowCount } = await pool().query(`UPDATE "User" SET role = $1, "updatedAt" = ${timestampFromMs("$2")} WHERE id = $3`, [role, now, id]);
  return rowCount === 1;
}

export async function setDisabled(id: string, disabled: boolean, now = Date.now()): Promise<boolean> {
  return inTransaction(async (client) => {
    const { rowCount } = await client.query(`UPDATE "User" SET banned = $1, "updatedAt" = ${timestampFromMs("$2")} WHERE id = $3`, [disabled, now, id]);
    const changed = rowCount === 1;
    if (changed && disabled) {
      await client.query(`DELETE FROM "Session" WHERE "userId" = $1`, [id]);
      await client.query(`UPDATE "ApiKey" SET "revokedAt" = ${timestampFromMs("$1")} WHERE "ownerId" = $2 AND "revokedAt" IS NULL`, [now, id]);
    }
    return changed;
  });
}

export async function endSessions(userId: string): Promise<number> {
  return (await pool().query(`DELETE FROM "Session" WHERE "userId" = $1`, [userId])).rowCount ?? 0;
}

export async function endSession(sessionId: string): Promise<void> {
  await pool().query(`DELETE FROM "Session" WHERE id = $1`, [sessionId]);
}

export async function countOtherAdmins(exceptId: string): Promise<number> {
  const { rows } = await pool().query<{ n: number }>(`SELECT count(*) AS n FROM "User" WHERE role = 'admin' AND NOT coalesce(banned, false) AND id != $1`, [exceptId]);
  return rows[0].n;
}
