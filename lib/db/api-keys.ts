import type { Role } from "@/lib/auth/roles";
import { roleOf } from "@/lib/auth/roles";
import type { ApiKeyOverview } from "@/lib/wire/types";
import { committedRead, db, serialized } from "./client";
import { isoOrNull, statement, type Sql } from "./statement";

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

interface KeyRow {
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

export function insertApiKey(key: NewApiKey, now = Date.now()): Promise<void> {
  return serialized(() => insertApiKeyInto(db().sql, key, now));
}

/** Inserts a key through a given connection: a test harness seeding a server's database file from outside. */
export function insertApiKeyInto(sql: Sql, key: NewApiKey, now: number): void {
  statement(`INSERT INTO "ApiKey" (id, name, role, keyHash, prefix, ownerId, createdAt) VALUES (?, ?, ?, ?, ?, ?, ?)`, sql).run(
    key.id, key.name, key.role, key.keyHash, key.prefix, key.ownerId, now,
  );
}

export function listApiKeys(ownerId?: string): Promise<ApiKeyRecord[]> {
  return committedRead((sql) => {
    const rows = (ownerId === undefined
      ? statement(`${LIST} ORDER BY k.revokedAt IS NOT NULL, k.createdAt DESC`, sql).all()
      : statement(`${LIST} WHERE k.ownerId = ? ORDER BY k.revokedAt IS NOT NULL, k.createdAt DESC`, sql).all(ownerId)) as KeyRow[];
    return rows.map((row) => ({ ...row, role: roleOf(row.role) }));
  });
}

/** Every key, live ones first, for the People page. */
export async function apiKeyOverviews(): Promise<ApiKeyOverview[]> {
  return (await listApiKeys()).map((key) => ({
    id: key.id, name: key.name, role: key.role, prefix: key.prefix, owner: key.ownerEmail,
    createdAt: isoOrNull(key.createdAt)!, lastUsedAt: isoOrNull(key.lastUsedAt), revokedAt: isoOrNull(key.revokedAt),
  }));
}

/**
 * The live key with this hash and its owner's standing, read without waiting behind ingestion.
 * `lastUsedAt` is recorded at most once a minute, queued behind the answer, which never waits for it.
 */
export function keyHolder(keyHash: string, now = Date.now()): Promise<KeyHolder | null> {
  return committedRead((sql) => {
    const row = statement(
      `SELECT k.id, k.name, k.role, k.ownerId, k.lastUsedAt, u.email AS ownerEmail, u.role AS ownerRole, u.banned AS ownerBanned
       FROM "ApiKey" k LEFT JOIN "User" u ON u.id = k.ownerId WHERE k.keyHash = ? AND k.revokedAt IS NULL`,
      sql,
    ).get(keyHash) as
      | { id: string; name: string; role: string; ownerId: string | null; lastUsedAt: number | null; ownerEmail: string | null; ownerRole: string | null; ownerBanned: number | null }
      | undefined;
    if (!row) return null;
    if (row.lastUsedAt === null || now - row.lastUsedAt >= 60_000) touchApiKey(row.id, now);
    return {
      id: row.id,
      name: row.name,
      role: roleOf(row.role),
      ownerId: row.ownerId,
      ownerEmail: row.ownerEmail,
      ownerRole: row.ownerId ? roleOf(row.ownerRole) : null,
      ownerDisabled: row.ownerBanned === 1,
    };
  });
}

/** A use is a record, never a reason to refuse the request: a failed touch is dropped and the next use retries it. */
function touchApiKey(id: string, now: number): void {
  serialized(() => statement(`UPDATE "ApiKey" SET lastUsedAt = ? WHERE id = ? AND (lastUsedAt IS NULL OR lastUsedAt < ?)`).run(now, id, now)).catch(() => undefined);
}

/** Revokes live keys by id or by name; returns how many. */
export function revokeApiKeys(by: { id: string } | { name: string }, now = Date.now()): Promise<ApiKeyRecord[]> {
  return serialized(() => {
    const [column, value] = "id" in by ? ["id", by.id] : ["name", by.name];
    const rows = statement(`${LIST} WHERE k.${column} = ? AND k.revokedAt IS NULL`).all(value) as KeyRow[];
    statement(`UPDATE "ApiKey" SET revokedAt = ? WHERE ${column} = ? AND revokedAt IS NULL`).run(now, value);
    return rows.map((row) => ({ ...row, role: roleOf(row.role), revokedAt: now }));
  });
}
