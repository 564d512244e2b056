import type { Role } from "@/lib/auth/roles";
import { addressLockouts, personLockout, windowStart } from "@/lib/auth/lockout";
import type { PersonOverview, SignInAddressOverview } from "@/lib/wire/types";
import { committedRead, serialized } from "./client";
import * as postgres from "./postgres/people";
import { toOverview, toPerson, type PersonRecord, type PersonRow } from "./records/people";
import { failuresSince } from "./sign-in-guard";
import { statement } from "./statement";
import { onEitherStore } from "./store";

export type { PersonRecord } from "./records/people";

/**
 * People as Retry Radar reads and changes them. Creating people, passwords and sessions is the
 * authentication library's (lib/auth/better-auth.ts, writing the same tables through Prisma);
 * what only this product does — roles, disabling, the People page's list — is here.
 */

const COLUMNS = `id, name, email, role, banned, createdAt`;

const sqlite = {
  countPeople(): Promise<number> {
    return serialized(() => (statement(`SELECT count(*) AS n FROM "User"`).get() as { n: number }).n);
  },

  /** Every signed-in request resolves its person: a committed read, never queued behind ingestion. */
  personById(id: string): Promise<PersonRecord | null> {
    return committedRead((sql) => {
      const row = statement(`SELECT ${COLUMNS} FROM "User" WHERE id = ?`, sql).get(id) as PersonRow | undefined;
      return row ? toPerson(row) : null;
    });
  },

  personByEmail(email: string): Promise<PersonRecord | null> {
    return serialized(() => {
      const row = statement(`SELECT ${COLUMNS} FROM "User" WHERE email = ?`).get(email.toLowerCase()) as PersonRow | undefined;
      return row ? toPerson(row) : null;
    });
  },

  listPeople(): Promise<PersonRecord[]> {
    return committedRead((sql) => (statement(`SELECT ${COLUMNS} FROM "User" ORDER BY email`, sql).all() as PersonRow[]).map(toPerson));
  },

  setRole(id: string, role: Role, now = Date.now()): Promise<boolean> {
    return serialized(() => statement(`UPDATE "User" SET role = ?, updatedAt = ? WHERE id = ?`).run(role, now, id).changes === 1);
  },

  /** Disables (or enables) a person. Disabling ends every session and revokes their API keys at once. */
  setDisabled(id: string, disabled: boolean, now = Date.now()): Promise<boolean> {
    return serialized(() => {
      const changed = statement(`UPDATE "User" SET banned = ?, updatedAt = ? WHERE id = ?`).run(disabled ? 1 : 0, now, id).changes === 1;
      if (changed && disabled) {
        statement(`DELETE FROM "Session" WHERE userId = ?`).run(id);
        statement(`UPDATE "ApiKey" SET revokedAt = ? WHERE ownerId = ? AND revokedAt IS NULL`).run(now, id);
      }
      return changed;
    });
  },

  /** Ends every session of a person ("sign out everywhere"). */
  endSessions(userId: string): Promise<number> {
    return serialized(() => statement(`DELETE FROM "Session" WHERE userId = ?`).run(userId).changes);
  },

  /** Ends one session by its id (a session past its absolute lifetime). */
  endSession(sessionId: string): Promise<void> {
    return serialized(() => {
      statement(`DELETE FROM "Session" WHERE id = ?`).run(sessionId);
    });
  },

  /** Admins who can still sign in other than `exceptId`: the People page never leaves none. */
  countOtherAdmins(exceptId: string): Promise<number> {
    return serialized(
      () => (statement(`SELECT count(*) AS n FROM "User" WHERE role = 'admin' AND coalesce(banned, 0) = 0 AND id != ?`).get(exceptId) as { n: number }).n,
    );
  },
};

export const { countPeople, personById, personByEmail, listPeople, setRole, setDisabled, endSessions, endSession, countOtherAdmins } =
  onEitherStore(sqlite, postgres);

/** Everyone, with their failed sign-ins in the window and any lockout they cause now, for the People page. */
export async function peopleOverview(now = Date.now()): Promise<PersonOverview[]> {
  const [people, failures] = await Promise.all([listPeople(), failuresSince(windowStart(now))]);
  return people.map((person) => toOverview(person, personLockout(failures.filter((f) => f.email === person.email), now)));
}

/** The client addresses whose failed sign-ins hold every sign-in from them back now, for the People page. */
export async function lockedAddresses(now = Date.now()): Promise<SignInAddressOverview[]> {
  return addressLockouts(await failuresSince(windowStart(now)), now).map((a) => ({ ...a, lockedUntil: new Date(a.lockedUntil).toISOString() }));
}
