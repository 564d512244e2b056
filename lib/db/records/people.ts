import type { Role } from "@/lib/auth/roles";
import { roleOf } from "@/lib/auth/roles";
import type { PersonOverview } from "@/lib/wire/types";
import { isoOrNull } from "../statement";

/**
 * What lib/db/people.ts answers, and how either store's rows map to it: one home for both
 * stores' bodies (lib/db/people.ts, lib/db/postgres/people.ts).
 */
export interface PersonRecord {
  id: string;
  name: string;
  email: string;
  role: Role;
  disabled: boolean;
  createdAt: number;
}

/** A person's row as both stores' SQL selects it (`banned` 0/1, times in epoch ms). */
export interface PersonRow {
  id: string;
  name: string;
  email: string;
  role: string | null;
  banned: number | null;
  createdAt: number;
}

export function toPerson(row: PersonRow): PersonRecord {
  return { id: row.id, name: row.name, email: row.email, role: roleOf(row.role), disabled: row.banned === 1, createdAt: row.createdAt };
}

/** A person with their failed sign-ins in the window and the lockout they cause now, for the People page. */
export function toOverview(person: PersonRecord, lockout: { failures: number; lockedUntil: number | null }): PersonOverview {
  return { ...person, createdAt: isoOrNull(person.createdAt)!, lockedUntil: isoOrNull(lockout.lockedUntil), failures: lockout.failures };
}
