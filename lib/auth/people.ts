import { isAPIError } from "better-auth/api";
import { recordAudit } from "@/lib/db/audit";
import { clearGuards, countFailure, guardStates } from "@/lib/db/sign-in-guard";
import { countOtherAdmins, countPeople, personByEmail, type PersonRecord } from "@/lib/db/people";
import { readSetting, takeSetting, writeSetting } from "@/lib/db/settings";
import crypto from "node:crypto";
import { auth } from "./better-auth";
import { hashCredential } from "./credentials";
import { accountGuard, addressGuard, lockFor, lockoutMessage } from "./lockout";
import type { Role } from "./roles";

/**
 * People: creating them (setup link, admins, the shell), passwords, and signing in with the
 * lockout. Password hashing and sessions are the authentication library's.
 */
export class PersonError extends Error {
  override name = "PersonError";
}

export const MIN_PASSWORD_LENGTH = 10;
const SETUP_CODE = "setup.code";

/** Creates a person who signs in with a password. */
export async function createPerson(input: { email: string; name?: string; password: string; role: Role }): Promise<PersonRecord> {
  const email = await checkNewPerson(input);
  const context = await (await auth()).$context;
  const hash = await context.password.hash(input.password);
  const user = await context.internalAdapter.createUser({ email, name: input.name?.trim() || email.split("@")[0], role: input.role, emailVerified: false }, { method: "admin" });
  await context.internalAdapter.linkAccount({ providerId: "credential", accountId: user.id, password: hash, userId: user.id });
  return (await personByEmail(email))!;
}

/** A password an admin hands on once (16 characters of 96 random bits). */
export function generatePassword(): string {
  return crypto.randomBytes(12).toString("base64url");
}

/**
 * Why `person` may not stop being an admin (demoted or disabled), or null: someone must still be
 * able to manage people. The shell can always recover, so only the People page asks.
 */
export async function lastAdminRefusal(person: PersonRecord): Promise<string | null> {
  if (person.role !== "admin" || person.disabled) return null;
  return (await countOtherAdmins(person.id)) > 0 ? null : `${person.email} is the last admin: make someone else an admin first.`;
}

/** The new person's email, normalized, or a PersonError saying what is wrong. */
async function checkNewPerson(input: { email: string; password: string }): Promise<string> {
  const email = input.email.trim().toLowerCase();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)) throw new PersonError(`"${input.email}" is not an email address.`);
  if (input.password.length < MIN_PASSWORD_LENGTH) throw new PersonError(`A password needs at least ${MIN_PASSWORD_LENGTH} characters.`);
  if (await personByEmail(email)) throw new PersonError(`${email} already has an account.`);
  return email;
}

/** Sets a new password (the shell's recovery) and ends the person's sessions. */
export async function resetPassword(personId: string, password: string): Promise<void> {
  if (password.length < MIN_PASSWORD_LENGTH) throw new PersonError(`A password needs at least ${MIN_PASSWORD_LENGTH} characters.`);
  const context = await (await auth()).$context;
  const hash = await context.password.hash(password);
  const account = await context.internalAdapter.findCredentialAccount(personId);
  if (account) await context.internalAdapter.updatePassword(personId, hash);
  else await context.internalAdapter.linkAccount({ providerId: "credential", accountId: personId, password: hash, userId: personId });
  await context.internalAdapter.deleteUserSessions(personId);
}

export type SignInResult = { ok: true } | { ok: false; error: string };

/**
 * Signs a person in (the session cookie is set by the library), unless their account or address is
 * locked out. Every attempt is audited under the email it named.
 */
export async function signIn(input: { email: string; password: string; address: string | null; headers: Headers }, now = Date.now()): Promise<SignInResult> {
  const email = input.email.trim().toLowerCase();
  const guards = [accountGuard(email), ...(input.address ? [addressGuard(input.address)] : [])];
  const states = await guardStates(guards);
  const locked = [...states.values()].map((s) => s.lockedUntil ?? 0).reduce((a, b) => Math.max(a, b), 0);
  if (locked > now) {
    await recordAudit({ at: now, actor: email, action: "sign-in", result: "refused", detail: `locked out; address ${input.address ?? "unknown"}` });
    return { ok: false, error: lockoutMessage(locked, now) };
  }
  try {
    await (await auth()).api.signInEmail({ body: { email, password: input.password, rememberMe: true }, headers: input.headers });
  } catch (error) {
    // By name, not class: Next bundles the library once per route group, so the class thrown may be another copy.
    if (!isAPIError(error)) throw error;
    const after = await countFailure(guards, now, lockFor);
    const lockedNow = Math.max(0, ...[...after.values()].map((s) => s.lockedUntil ?? 0));
    const disabled = error.status === "FORBIDDEN";
    await recordAudit({
      at: now, actor: email, action: "sign-in", result: "failed",
      detail: `${disabled ? "account disabled" : "wrong email or password"}; ${after.get(guards[0])?.failures ?? 0} failures in a row; address ${input.address ?? "unknown"}${lockedNow > now ? "; now locked out" : ""}`,
    });
    if (lockedNow > now) return { ok: false, error: lockoutMessage(lockedNow, now) };
    return { ok: false, error: disabled ? "This account is disabled. Ask an admin." : "Wrong email or password." };
  }
  await clearGuards([guards[0]]);
  await recordAudit({ at: now, actor: email, action: "sign-in", result: "ok", detail: `address ${input.address ?? "unknown"}` });
  return { ok: true };
}

/** Lifts a person's lockout; true when there was one. */
export async function unlock(email: string): Promise<boolean> {
  return (await clearGuards([accountGuard(email)])) > 0;
}

/**
 * First start: with nobody in the database, the first admin comes from RADAR_ADMIN_EMAIL and
 * RADAR_ADMIN_PASSWORD (unattended deployments) or from a one-time setup link. Returns the link
 * only when its code was made now, so it is printed once.
 */
export async function ensureFirstAdmin(settings: { email?: string; password?: string; baseUrl: string }): Promise<{ setupLink: string | null; pending: boolean }> {
  if (settings.email && settings.password) {
    if (!(await personByEmail(settings.email))) {
      await createPerson({ email: settings.email, password: settings.password, role: "admin" });
      await recordAudit({ at: Date.now(), actor: "RADAR_ADMIN_EMAIL", action: "person.create", target: settings.email.toLowerCase(), result: "ok", detail: "role admin" });
    }
    return { setupLink: null, pending: false };
  }
  if ((await countPeople()) > 0) return { setupLink: null, pending: false };
  const existing = await readSetting(SETUP_CODE);
  if (existing) return { setupLink: null, pending: true };
  return { setupLink: await newSetupLink(settings.baseUrl), pending: true };
}

/** A new one-time setup link (replacing any earlier one), for the shell's `users setup-link`. */
export async function newSetupLink(baseUrl: string): Promise<string> {
  const code = crypto.randomBytes(24).toString("base64url");
  await writeSetting(SETUP_CODE, code);
  return `${baseUrl}/setup?code=${code}`;
}

/** Whether the setup code is the live one (the setup page shows its form only then). */
export async function setupCodeValid(code: string): Promise<boolean> {
  const stored = await readSetting(SETUP_CODE);
  return stored !== null && code.length > 0 && crypto.timingSafeEqual(Buffer.from(hashCredential(stored)), Buffer.from(hashCredential(code)));
}

/** Uses the setup code once: creates the admin. The caller then signs them in. */
export async function completeSetup(input: { code: string; email: string; name?: string; password: string }): Promise<PersonRecord> {
  if (!(await setupCodeValid(input.code))) throw new PersonError("This setup link is not valid any more. Run `npm run users -- setup-link` for a new one.");
  await checkNewPerson(input);
  if (!(await takeSetting(SETUP_CODE, input.code))) throw new PersonError("This setup link was just used. Sign in instead.");
  const person = await createPerson({ email: input.email, name: input.name, password: input.password, role: "admin" });
  await recordAudit({ at: Date.now(), actor: person.email, action: "person.create", target: person.email, result: "ok", detail: "first admin, from the setup link" });
  return person;
}

