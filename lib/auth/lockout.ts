import ipaddr from "ipaddr.js";
import { humanDuration } from "@/lib/retry/duration";

/**
 * The sign-in throttling rule: failures are counted in a sliding window (FAILURE_WINDOW_MS), per
 * account from one address, per account from anywhere, and per address whatever the account.
 * Past a count's threshold, sign-ins it covers wait after the latest failure — 1 min, doubling
 * with each failure beyond it, at most LONGEST_WAIT_MS — and are refused, even with the right
 * password, only while they wait: the right password after the wait signs in. Failures older
 * than the window are forgotten, so nobody stays held back by old typos (everyone behind one NAT
 * shares an address), and someone else's failures can hold an account back only by repeating
 * them, for minutes at a time. An admin clears an account's or an address's failures (People
 * page, `npm run users -- unlock`). A browser the person signed in from recently (a known
 * device) is held back by its own failures only, so others' repeated guesses cannot keep the
 * person out of it at all. An attempt counts as a failure from before its password is checked
 * (lib/auth/people.ts), so parallel attempts cannot pass on one count.
 *
 * The counts live in the store (lib/db/sign-in-guard.ts) rather than rate-limiter-flexible's:
 * its windows are fixed, not sliding, and its SQL stores make tables outside the migrations
 * that the People page could not list.
 */
export const FAILURE_WINDOW_MS = 15 * 60_000;
/** One account from one address: a person's own typos. */
export const PAIR_FAILURES_BEFORE_WAIT = 10;
/** One account from anywhere: guessing spread over many addresses. */
export const ACCOUNT_FAILURES_BEFORE_WAIT = 50;
/** One address whatever the account: many accounts tried from one place. */
export const ADDRESS_FAILURES_BEFORE_WAIT = 50;
const FIRST_WAIT_MS = 60_000;
export const LONGEST_WAIT_MS = 15 * 60_000;

/** Failures of one kind within the window: how many, and the latest (epoch ms). */
export interface FailureCount {
  count: number;
  last: number | null;
}

/** The failures a sign-in of `email` from `address` (and from a known device) is judged by. */
export interface RecentFailures {
  pair: FailureCount;
  account: FailureCount;
  address: FailureCount;
  /** Of the email from the browser's known device (none without one). */
  device: FailureCount;
}

export type Held = { until: number; by: "account" | "address" };

/** Until when `failures` hold back what they count (epoch ms), or null when they do not. */
export function waitUntil(failures: FailureCount, threshold: number): number | null {
  if (failures.count < threshold || failures.last === null) return null;
  return failures.last + Math.min(LONGEST_WAIT_MS, FIRST_WAIT_MS * 2 ** Math.min(30, failures.count - threshold));
}

/**
 * Whether a sign-in must wait now, and until when; the longest wait wins. A browser that signed in
 * as the person recently (`knownDevice`, lib/auth/known-device.ts) is judged by its own failures
 * of that account only: others' guesses, from its address or anywhere, cannot hold it back.
 */
export function heldUntil(recent: RecentFailures, now: number, knownDevice = false): Held | null {
  if (knownDevice) {
    const until = waitUntil(recent.device, PAIR_FAILURES_BEFORE_WAIT);
    return until !== null && until > now ? { until, by: "account" } : null;
  }
  const waits: Held[] = [];
  const pair = waitUntil(recent.pair, PAIR_FAILURES_BEFORE_WAIT);
  const account = waitUntil(recent.account, ACCOUNT_FAILURES_BEFORE_WAIT);
  const address = waitUntil(recent.address, ADDRESS_FAILURES_BEFORE_WAIT);
  if (pair !== null) waits.push({ until: pair, by: "account" });
  if (account !== null) waits.push({ until: account, by: "account" });
  if (address !== null) waits.push({ until: address, by: "address" });
  const longest = waits.filter((w) => w.until > now).sort((a, b) => b.until - a.until)[0];
  return longest ?? null;
}

/** Failures of one email from one address within the window (as lib/db/sign-in-guard.ts groups them). */
export interface FailureGroup {
  email: string;
  address: string;
  count: number;
  last: number;
}

const total = (groups: FailureGroup[]): FailureCount => ({
  count: groups.reduce((n, g) => n + g.count, 0),
  last: groups.length === 0 ? null : Math.max(...groups.map((g) => g.last)),
});

/**
 * One person's failures in the window (`groups`: theirs, by address) and the latest time until
 * which they hold the account back from some address or from all, if that is after `now`.
 */
export function personLockout(groups: FailureGroup[], now: number): { failures: number; lockedUntil: number | null } {
  const all = total(groups);
  const waits = [waitUntil(all, ACCOUNT_FAILURES_BEFORE_WAIT), ...groups.map((g) => waitUntil(g, PAIR_FAILURES_BEFORE_WAIT))].filter((w): w is number => w !== null && w > now);
  return { failures: all.count, lockedUntil: waits.length === 0 ? null : Math.max(...waits) };
}

/** The addresses whose failures in the window hold back every sign-in from them now, in address order. */
export function addressLockouts(groups: FailureGroup[], now: number): { address: string; failures: number; lockedUntil: number }[] {
  const byAddress = new Map<string, FailureGroup[]>();
  for (const g of groups) byAddress.set(g.address, [...(byAddress.get(g.address) ?? []), g]);
  const out: { address: string; failures: number; lockedUntil: number }[] = [];
  for (const [address, ofAddress] of byAddress) {
    const all = total(ofAddress);
    const until = waitUntil(all, ADDRESS_FAILURES_BEFORE_WAIT);
    if (until !== null && until > now) out.push({ address, failures: all.count, lockedUntil: until });
  }
  return out.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
}

/**
 * The address failures are counted under: an IPv6 client by its /64, the least one host or home
 * is given, so stepping through its own addresses does not escape the per-address limit; an
 * IPv4-mapped IPv6 address as the IPv4 address. Anything else as it is.
 */
export function throttledAddress(address: string): string {
  if (!ipaddr.IPv6.isValid(address)) return address;
  const parsed = ipaddr.IPv6.parse(address);
  if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString();
  const parts = parsed.parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}

/** The start of the window at `now`: failures at or before it are forgotten. */
export const windowStart = (now: number) => now - FAILURE_WINDOW_MS;

/** How a wait reads to the person at the sign-in form. */
export function lockoutMessage(held: Held, now: number): string {
  const wait = humanDuration(Math.ceil(Math.max(1000, held.until - now) / 1000) * 1000);
  return held.by === "account"
    ? `Too many failed sign-ins: this account is locked for ${wait}; then the right password works again. An admin can unlock it on the People page or with \`npm run users -- unlock <email>\`.`
    : `Too many failed sign-ins from this address: sign-ins from here wait ${wait}; then the right password works again. An admin can clear the address on the People page or with \`npm run users -- unlock --address <address>\`.`;
}
