import type { Role } from "@/lib/auth/roles";
import { roleOf } from "@/lib/auth/roles";
import type { ApiKeyOverview } from "@/lib/wire/types";
import { committedRead, db, serialized } from "./client";
import * as postgres from "./postgres/api-keys";
import { isoOrNull, statement, type Sql } from "./statement";
import { onEitherStore } from "./store";

/** API keys as stored: only their hash; generating and hashing them is lib/auth/api-keys.ts's. */
export interface ApiKeyRecord {
  id: string;
  name: string;
  role: Role;
  prefix: string;
  ownerId: string | null;
  ownerEmail: string | null;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

/** What a presented key resolves to: the key and, when a person owns it, their current standing. */
export interface KeyHolder {
  id: string;
  name: string;
  role: Role;
  ownerId: string | null;
  ownerEmail: string | null;
  ownerRole: Role | null;
  ownerDisabled: boolean;
}

/** A key's row as both stores' SQL selects it (times in epoch ms). */
export interface KeyRow {
  id: string;
  name: string;
  role: string;
  prefix: string;
  ownerId: string | null;
  ownerEmail: string | null;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

export const toApiKey = (row: KeyRow): ApiKeyRecord => ({ ...row, role: roleOf(row.role) });

/** A presented key's row as both stores' SQL selects it (`ownerBanned` 0/1). */
export interface HolderRow {
  id: string;
  name: string;
  role: string;
  ownerId: string | null;
  lastUsedAt: number | null;
  ownerEmail: string | null;
  ownerRole: string | null;
  ownerBanned: number | null;
}

/** `lastUsedAt` is recorded at most once a minute. */
export const needsTouch = (row: HolderRow, now: number) => row.lastUsedAt === null || now - row.lastUsedAt >= 60_000;

export function toKeyHolder(row: HolderRow): KeyHolder {
  return {
    id: row.id,
    name: row.name,
    role: roleOf(row.role),
    ownerId: row.ownerId,
    ownerEmail: row.ownerEmail,
    ownerRole: row.ownerId ? roleOf(row.ownerRole) : null,
    ownerDisabled: row.ownerBanned === 1,
  };
}

/** Live keys first, newest first: the order of every list of keys. */
export const KEY_ORDER = `ORDER BY k."revokedAt" IS NOT NULL, k."createdAt" DESC`;

const LIST = `SELECT k.id, k.name, k.role, k.prefix, k.ownerId, u.email AS ownerEmail, k.createdAt, k.lastUsedAt, k.revokedAt
  FROM "ApiKey" k LEFT JOIN "User" u ON u.id = k.ownerId`;

export interface NewApiKey {
  id: string;
  name: string;
  role: Role;
  keyHash: string;
  prefix: string;
  ownerId: string | null;
}

/** Inserts a key through a given connection: a test harness seeding a server's database file from outside. */
export function insertApiKeyInto(sql: Sql, key: NewApiKey, now: number): void {
  statement(`INSERT INTO "ApiKey" (id, name, role, keyHash, prefix, ownerId, createdAt) VALUES (?, ?, ?, ?, ?, ?, ?)`, sql).run(
    key.id, key.name, key.role, key.keyHash, key.prefix, key.ownerId, now,
  );
}

/** A use is a record, never a reason to refuse the request: a failed touch is dropped and the next use retries it. */
function touchApiKey(id: string, now: number): void {
  serialized(() => statement(`UPDATE "ApiKey" SET lastUsedAt = ? WHERE id = ? AND (lastUsedAt IS NULL OR lastUsedAt < ?)`).run(now, id, now)).catch(() => undefined);
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
