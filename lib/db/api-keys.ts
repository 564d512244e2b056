import type { ApiKeyOverview } from "@/lib/wire/types";
import { committedRead, db, serialized, writeTransaction } from "./client";
import * as postgres from "./postgres/api-keys";
import { KEY_ORDER, needsTouch, toApiKey, toKeyHolder, type ApiKeyRecord, type HolderRow, type KeyHolder, type KeyRow, type NewApiKey } from "./records/api-keys";
import { isoOrNull, statement, type Sql } from "./statement";
import { onEitherStore } from "./store";

export type { ApiKeyRecord, KeyHolder, NewApiKey } from "./records/api-keys";

const LIST = `SELECT k.id, k.name, k.role, k.prefix, k.ownerId, u.email AS ownerEmail, k.createdAt, k.lastUsedAt, k.revokedAt
  FROM "ApiKey" k LEFT JOIN "User" u ON u.id = k.ownerId`;

/** Inserts a key through a given connection: a test harness seeding a server's database file from outside. */
export function insertApiKeyInto(sql: Sql, key: NewApiKey, now: number): void {
  statement(`INSERT INTO "ApiKey" (id, name, role, keyHash, prefix, ownerId, createdAt) VALUES (?, ?, ?, ?, ?, ?, ?)`, sql).run(
    key.id, key.name, key.role, key.keyHash, key.prefix, key.ownerId, now,
  );
}

/** A use is a record, never a reason to refuse the request: a failed touch is dropped and the next use retries it. */
function touchApiKey(id: string, now: number): void {
  // On every request made with a key: a write transaction, so a lock held elsewhere never holds the thread (client.ts beginImmediate).
  writeTransaction(() => statement(`UPDATE "ApiKey" SET lastUsedAt = ? WHERE id = ? AND (lastUsedAt IS NULL OR lastUsedAt < ?)`).run(now, id, now)).catch(() => undefined);
}

const sqlite = {
  insertApiKey(key: NewApiKey, now = Date.now()): Promise<void> {
    return serialized(() => insertApiKeyInto(db().sql, key, now));
  },

  listApiKeys(ownerId?: string): Promise<ApiKeyRecord[]> {
    return committedRead((sql) => {
      const rows = (ownerId === undefined
        ? statement(`${LIST} ${KEY_ORDER}`, sql).all()
        : statement(`${LIST} WHERE k.ownerId = ? ${KEY_ORDER}`, sql).all(ownerId)) as KeyRow[];
      return rows.map(toApiKey);
    });
  },

  /**
   * The live key with this hash and its owner's standing, read without waiting behind ingestion.
   * `lastUsedAt` is recorded at most once a minute, queued behind the answer, which never waits for it.
   */
  keyHolder(keyHash: string, now = Date.now()): Promise<KeyHolder | null> {
    return committedRead((sql) => {
      const row = statement(
        `SELECT k.id, k.name, k.role, k.ownerId, k.lastUsedAt, u.email AS ownerEmail, u.role AS ownerRole, u.banned AS ownerBanned
         FROM "ApiKey" k LEFT JOIN "User" u ON u.id = k.ownerId WHERE k.keyHash = ? AND k.revokedAt IS NULL`,
        sql,
      ).get(keyHash) as HolderRow | undefined;
      if (!row) return null;
      if (needsTouch(row, now)) touchApiKey(row.id, now);
      return toKeyHolder(row);
    });
  },

  /** Revokes live keys by id or by name; returns how many. */
  revokeApiKeys(by: { id: string } | { name: string }, now = Date.now()): Promise<ApiKeyRecord[]> {
    return serialized(() => {
      const [column, value] = "id" in by ? ["id", by.id] : ["name", by.name];
      const rows = statement(`${LIST} WHERE k.${column} = ? AND k.revokedAt IS NULL`).all(value) as KeyRow[];
      statement(`UPDATE "ApiKey" SET revokedAt = ? WHERE ${column} = ? AND revokedAt IS NULL`).run(now, value);
      return rows.map((row) => ({ ...toApiKey(row), revokedAt: now }));
    });
  },
};

export const { insertApiKey, listApiKeys, keyHolder, revokeApiKeys } = onEitherStore(sqlite, postgres);

/** Every key, live ones first, for the People page. */
export async function apiKeyOverviews(): Promise<ApiKeyOverview[]> {
  return (await listApiKeys()).map((key) => ({
    id: key.id, name: key.name, role: key.role, prefix: key.prefix, owner: key.ownerEmail,
    createdAt: isoOrNull(key.createdAt)!, lastUsedAt: isoOrNull(key.lastUsedAt), revokedAt: isoOrNull(key.revokedAt),
  }));
}
