import type pg from "pg";
import { KEY_ORDER, needsTouch, toApiKey, toKeyHolder, type ApiKeyRecord, type HolderRow, type KeyHolder, type KeyRow, type NewApiKey } from "../records/api-keys";
import { inTransaction, pool } from "./pool";
import { msFromTimestamp, timestampFromMs } from "./time";

/** lib/db/api-keys.ts on PostgreSQL: the same exports, answers and rules. */
/** A key's time column, as epoch ms under its own name. */
const ms = (column: string) => `${msFromTimestamp(`k."${column}"`)} AS "${column}"`;

const LIST = `SELECT k.id, k.name, k.role, k.prefix, k."ownerId", u.email AS "ownerEmail",
    ${ms("createdAt")}, ${ms("lastUsedAt")}, ${ms("revokedAt")}
  FROM "ApiKey" k LEFT JOIN "User" u ON u.id = k."ownerId"`;

export async function insertApiKey(key: NewApiKey, now = Date.now()): Promise<void> {
  await insertApiKeyOn(pool(), key, now);
}

/** Through a connection given (seeding a test server's database, as insertApiKeyInto does on SQLite). */
export async function insertApiKeyOn(client: pg.ClientBase | pg.Pool, key: NewApiKey, now: number): Promise<void> {
  await client.query(
    `INSERT INTO "ApiKey" (id, name, role, "keyHash", prefix, "ownerId", "createdAt") VALUES ($1, $2, $3, $4, $5, $6, ${timestampFromMs("$7")})`,
    [key.id, key.name, key.role, key.keyHash, key.prefix, key.ownerId, now],
  );
}

export async function listApiKeys(ownerId?: string): Promise<ApiKeyRecord[]> {
  const { rows } = ownerId === undefined
    ? await pool().query<KeyRow>(`${LIST} ${KEY_ORDER}`)
    : await pool().query<KeyRow>(`${LIST} WHERE k."ownerId" = $1 ${KEY_ORDER}`, [ownerId]);
  return rows.map(toApiKey);
}

export async function keyHolder(keyHash: string, now = Date.now()): Promise<KeyHolder | null> {
  const { rows } = await pool().query<HolderRow>(
    `SELECT k.id, k.name, k.role, k."ownerId", ${ms("lastUsedAt")}, u.email AS "ownerEmail", u.role AS "ownerRole", u.banned::int AS "ownerBanned"
     FROM "ApiKey" k LEFT JOIN "User" u ON u.id = k."ownerId" WHERE k."keyHash" = $1 AND k."revokedAt" IS NULL`,
    [keyHash],
  );
  const row = rows[0];
  if (!row) return null;
  if (needsTouch(row, now)) touchApiKey(row.id, now);
  return toKeyHolder(row);
}

/** As on SQLite: a failed touch is dropped, and the answer never waits for it. */
function touchApiKey(id: string, now: number): void {
  pool()
    .query(`UPDATE "ApiKey" SET "lastUsedAt" = ${timestampFromMs("$1")} WHERE id = $2 AND ("lastUsedAt" IS NULL OR "lastUsedAt" < ${timestampFromMs("$1")})`, [now, id])
    .catch(() => undefined);
}

export async function revokeApiKeys(by: { id: string } | { name: string }, now = Date.now()): Promise<ApiKeyRecord[]> {
  const [column, value] = "id" in by ? ["id", by.id] : ["name", by.name];
  // FOR UPDATE: a key revoked by two callers at once is reported by one of them only, as on SQLite.
  return inTransaction(async (client) => {
    const { rows } = await client.query<KeyRow>(`${LIST} WHERE k.${column} = $1 AND k."revokedAt" IS NULL FOR UPDATE OF k`, [value]);
    await client.query(`UPDATE "ApiKey" SET "revokedAt" = ${timestampFromMs("$1")} WHERE ${column} = $2 AND "revokedAt" IS NULL`, [now, value]);
    return rows.map((row) => ({ ...toApiKey(row), revokedAt: now }));
  });
}
