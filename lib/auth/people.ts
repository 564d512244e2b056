import { isAPIError } from "better-auth/api";
import { recordAudit } from "@/lib/db/audit";
import { claimSignInAttempt, forgetFailures, withdrawSignInAttempt } from "@/lib/db/sign-in-guard";
import { countOtherAdmins, countPeople, personByEmail, type PersonRecord } from "@/lib/db/people";
import { readSetting, writeSetting } from "@/lib/db/settings";
import { storePrisma } from "@/lib/db/store-prisma";
import { humanDuration } from "@/lib/retry/duration";
import crypto from "node:crypto";
import { auth } from "./better-auth";
import { hashCredential } from "./credentials";
import { knownDevice, newKnownDevice } from "./known-device";
import { FAILURE_WINDOW_MS, heldUntil, lockoutMessage, throttledAddress, windowStart, type FailureCount, type RecentFailures } from "./lockout";
import { SETUP_CODE } from "./setup-code";
import type { Role } from "./roles";

/**
 * People: creating them (setup link, admins, the shell), passwords, and signing in with the
 * lockout. Password hashing and sessions are the authentication library's.
 */
export class PersonError extends Error {
  override name = "PersonError";
}

export const MIN_PASSWORD_LENGTH = 10;

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

export type SignInResult = { ok: true; knownDevice: string } | { ok: false; error: string };

/**
 * Signs a person in (the session cookie is set by the library), unless failed sign-ins hold it
 * back for now (lib/auth/lockout.ts). The attempt is kept as a failure before its password is
 * checked, and forgotten when it was right, so attempts in flight count against the next one.
 * Every attempt is audited under the email it named. On success, the caller sets the known-device
 * cookie returned (lib/auth/known-device.ts).
 */
export async function signIn(input: { email: string; password: string; address: string | null; headers: Headers }, now = Date.now()): Promise<SignInResult> {
  const email = input.email.trim().toLowerCase();
  const address = throttledAddress(input.address ?? "unknown");
  const { secret } = await (await auth()).$context;
  const device = knownDevice(input.headers, secret, email, now);
  const held = (recent: RecentFailures) => heldUntil(recent, now, device !== null);
  const { recent, pending } = await claimSignInAttempt({ email, address, device, at: now }, windowStart(now), (r) => held(r) === null);
  if (pending === null) {
    const wait = held(recent)!;
    await recordAudit({ at: now, actor: email, action: "sign-in", result: "refused", detail: `locked out (${wait.by}); address ${address}` });
    return { ok: false, error: lockoutMessage(wait, now) };
  }
  try {
    await (await auth()).api.signInEmail({ body: { email, password: input.password, rememberMe: true }, headers: input.headers });
  } catch (error) {
    // By name, not class: Next bundles the library once per route group, so the class thrown may be another copy.
    if (!isAPIError(error)) {
      await withdrawSignInAttempt(pending);
      throw error;
    }
    // The failure is kept already (`pending`); the counts after it:
    const bump = (c: FailureCount) => ({ count: c.count + 1, last: now });
    const after = { pair: bump(recent.pair), account: bump(recent.account), address: bump(recent.address), device: device ? bump(recent.device) : recent.device };
    const heldNow = held(after);
    const disabled = error.status === "FORBIDDEN";
    const counted = device ? `${after.device.count} failures from this known device` : `${after.pair.count} failures from this address`;
    await recordAudit({
      at: now, actor: email, action: "sign-in", result: "failed",
      detail: `${disabled ? "account disabled" : "wrong email or password"}; ${counted} in ${humanDuration(FAILURE_WINDOW_MS)}; address ${address}${heldNow ? `; now locked out (${heldNow.by})` : ""}`,
    });
    if (heldNow) return { ok: false, error: lockoutMessage(heldNow, now) };
    return { ok: false, error: disabled ? "This account is disabled. Ask an admin." : "Wrong email or password." };
  }
  // The person's own typos from here (this attempt's row too) are forgotten; others' failures still count.
  await forgetFailures({ email, address });
  await recordAudit({ at: now, actor: email, action: "sign-in", result: "ok", detail: `address ${address}` });
  return { ok: true, knownDevice: newKnownDevice(secret, email, now) };
}

/** Lifts a person's lockout (forgets their failed sign-ins from everywhere); true when there were any. */
export async function unlock(email: string): Promise<boolean> {
  return (await forgetFailures({ email: email.trim().toLowerCase() })) > 0;
}

/** Lifts an address's lockout (forgets every failed sign-in from it); true when there were any. */
export async function unlockAddress(address: string): Promise<boolean> {
  return (await forgetFailures({ address: throttledAddress(address.trim()) })) > 0;
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

/** Admins, disabled or not: a setup code is for a database with none. */
async function countAdmins(prisma: Pick<ReturnType<typeof storePrisma>["prisma"], "user"> = storePrisma().prisma): Promise<number> {
  return prisma.user.count({ where: { role: "admin" } });
}

const ADMIN_EXISTS = "An admin exists already, so the setup link no longer works. Sign in, or ask an admin (from the shell: `npm run users -- create --role admin`).";

/** A new one-time setup link (replacing any earlier one), for the shell's `users setup-link`; refused once an admin exists. */
export async function newSetupLink(baseUrl: string): Promise<string> {
  if ((await countAdmins()) > 0) throw new PersonError(ADMIN_EXISTS);
  const code = crypto.randomBytes(24).toString("base64url");
  await writeSetting(SETUP_CODE, code);
  return `${baseUrl}/setup?code=${code}`;
}

/** Whether the setup code is the live one and no admin exists yet (the setup page shows its form only then). */
export async function setupCodeValid(code: string): Promise<boolean> {
  const stored = await readSetting(SETUP_CODE);
  if (stored === null || code.length === 0) return false;
  if (!crypto.timingSafeEqual(Buffer.from(hashCredential(stored)), Buffer.from(hashCredential(code)))) return false;
  return (await countAdmins()) === 0;
}

/**
 * Uses the setup code once: creates the admin. The caller then signs them in. Taking the code,
 * making sure no admin exists and creating the admin are one transaction on the store, so an
 * admin made another way meanwhile (or a second use of the link) refuses it. Every other way of
 * making an admin voids the code first (lib/auth/better-auth.ts), so while this holds the code's
 * row it waits: no admin lands under a setup in flight. The person's rows are
 * written here as the library's adapter writes them (lib/auth/better-auth.ts), because the
 * library's own creation cannot join that transaction.
 */
export async function completeSetup(input: { code: string; email: string; name?: string; password: string }): Promise<PersonRecord> {
  if (!(await setupCodeValid(input.code))) throw new PersonError("This setup link is not valid any more. Run `npm run users -- setup-link` for a new one, or sign in.");
  const email = await checkNewPerson(input);
  const context = await (await auth()).$context;
  const hash = await context.password.hash(input.password);
  const id = String(context.generateId({ model: "user" }) || crypto.randomUUID());
  const at = new Date();
  const refusal = await storePrisma().prisma.$transaction(async (tx) => {
    // The code first: on PostgreSQL its row stays locked until the end, so a second use waits and then finds it gone.
    if ((await tx.setting.deleteMany({ where: { key: SETUP_CODE, value: input.code } })).count !== 1) return "This setup link was just used. Sign in instead.";
    if ((await countAdmins(tx)) > 0) return ADMIN_EXISTS;
    await tx.user.create({ data: { id, email, name: input.name?.trim() || email.split("@")[0], emailVerified: false, role: "admin", banned: false, createdAt: at, updatedAt: at } });
    await tx.account.create({
      data: { id: String(context.generateId({ model: "account" }) || crypto.randomUUID()), providerId: "credential", accountId: id, userId: id, password: hash, createdAt: at, updatedAt: at },
    });
    return null;
  });
  if (refusal) throw new PersonError(refusal);
  const person = (await personByEmail(email))!;
  await recordAudit({ at: Date.now(), actor: person.email, action: "person.create", target: person.email, result: "ok", detail: "first admin, from the setup link" });
  return person;
}
