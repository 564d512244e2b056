/**
 * Who may do what. Three roles, each including the one before it:
 * - viewer: the board, thread pages, insights, exports, audit, the live stream, the read API;
 * - operator: a viewer who may also stop retrying, stop all matching and import captures;
 * - admin: an operator who may also manage sources, ingest tokens, policies, people and API keys.
 */
export const ROLES = ["viewer", "operator", "admin"] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}

/** Whether `role` includes everything `needed` may do. */
export function roleAllows(role: Role, needed: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(needed);
}

/** The lesser of two roles: an API key never exceeds the person who made it. */
export function lesserRole(a: Role, b: Role): Role {
  return ROLES.indexOf(a) <= ROLES.indexOf(b) ? a : b;
}

/** A stored role; anything unknown counts as the least. */
export function roleOf(value: unknown): Role {
  return isRole(value) ? value : "viewer";
}
