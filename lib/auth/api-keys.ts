import crypto from "node:crypto";
import { insertApiKey, keyHolder, type ApiKeyRecord, type NewApiKey } from "@/lib/db/api-keys";
import { generateCredential, hashCredential } from "./credentials";
import type { Principal } from "./principal";
import { lesserRole, roleAllows, type Role } from "./roles";

/** API keys for scripts and scrapers: named, with a role, shown once, stored hashed, revocable. */

export class ApiKeyError extends Error {
  override name = "ApiKeyError";
}

export const API_KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,63}$/;

/**
 * Creates a key. A person's key can never exceed their role; `owner` null makes a service-account
 * key (from the shell, where access to the database is admin by definition).
 */
export async function createApiKey(input: { name: string; role: Role; owner: { id: string; role: Role } | null }, now = Date.now()): Promise<{ key: string; id: string }> {
  if (!API_KEY_NAME.test(input.name)) throw new ApiKeyError("A key's name is 1–64 letters, digits, spaces or . _ @ -, starting with a letter or digit.");
  if (input.owner && !roleAllows(input.owner.role, input.role)) throw new ApiKeyError(`A ${input.owner.role} cannot make a key with the ${input.role} role.`);
  const { key, row } = newApiKey(input.name, input.role, input.owner?.id ?? null);
  await insertApiKey(row, now);
  return { key, id: row.id };
}

/** A fresh key and the row that stores it (its hash, never the key). */
export function newApiKey(name: string, role: Role, ownerId: string | null): { key: string; row: NewApiKey } {
  const key = generateCredential("api-key");
  return { key, row: { id: crypto.randomUUID(), name, role, keyHash: hashCredential(key), prefix: key.slice(0, 8), ownerId } };
}

/** Who a presented key acts as, or null: unknown, revoked, or its owner disabled. */
export async function principalForApiKey(key: string, now = Date.now()): Promise<Principal | null> {
  const holder = await keyHolder(hashCredential(key), now);
  if (!holder || holder.ownerDisabled) return null;
  const role = holder.ownerRole ? lesserRole(holder.role, holder.ownerRole) : holder.role;
  return {
    kind: "key",
    id: holder.id,
    role,
    actor: holder.ownerEmail ? `api key "${holder.name}" of ${holder.ownerEmail}` : `api key "${holder.name}"`,
    personId: holder.ownerId,
    displayName: holder.name,
    sessionId: null,
  };
}

export type { ApiKeyRecord };
