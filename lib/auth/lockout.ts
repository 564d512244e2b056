import { humanDuration } from "@/lib/retry/duration";

/**
 * The sign-in lockout rule. Failures in a row are counted per account and per client address.
 * From the 10th failure in a row an account refuses every password, even the right one, for a
 * while that doubles with each further failure (1 min, 2 min, 4 min … at most a day); an address
 * gets the same from its 50th (many accounts tried from one place). A success clears the
 * account's count; an admin can lift a lockout.
 */
export const ACCOUNT_FAILURES_BEFORE_LOCK = 10;
export const ADDRESS_FAILURES_BEFORE_LOCK = 50;
const FIRST_LOCK_MS = 60_000;
const LONGEST_LOCK_MS = 24 * 3_600_000;

export const accountGuard = (email: string) => `account:${email.trim().toLowerCase()}`;
export const addressGuard = (address: string) => `address:${address}`;

/** How long `failures` in a row lock the guard (ms), or null when they do not (yet). */
export function lockFor(key: string, failures: number): number | null {
  const threshold = key.startsWith("address:") ? ADDRESS_FAILURES_BEFORE_LOCK : ACCOUNT_FAILURES_BEFORE_LOCK;
  if (failures < threshold) return null;
  return Math.min(LONGEST_LOCK_MS, FIRST_LOCK_MS * 2 ** Math.min(30, failures - threshold));
}

/** How a lockout reads to the person at the sign-in form. */
export function lockoutMessage(until: number, now: number): string {
  const wait = humanDuration(Math.ceil(Math.max(1000, until - now) / 1000) * 1000);
  return `Too many failed sign-ins: this account is locked for ${wait}. An admin can unlock it on the People page or with \`npm run users -- unlock <email>\`.`;
}
