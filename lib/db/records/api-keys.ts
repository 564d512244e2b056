import type { Role } from "@/lib/auth/roles";
import { roleOf } from "@/lib/auth/roles";

/**
 * What lib/db/api-keys.ts answers, and how either store's rows map to it: one home for both
 * stores' bodies (lib/db/api-keys.ts, lib/db/postgres/api-keys.ts).
 */

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

/** A key's row as both stores' SQL selects it (times in epoch ms, the role as stored). */
export type KeyRow = Omit<ApiKeyRecord, "role"> & { role: string };

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

export interface NewApiKey {
  id: string;
  name: string;
  role: Role;
  keyHash: string;
  prefix: string;
  ownerId: string | null;
}
