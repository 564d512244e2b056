import type { RecentFailures } from "@/lib/auth/lockout";
import { serialized, writeTransaction } from "./client";
import * as postgres from "./postgres/sign-in-guard";
import { forgetWhere, type FailureGroup, type Forget } from "./records/sign-in-guard";
import { statement } from "./statement";
import { onEitherStore } from "./store";

export type { FailureGroup, Forget } from "./records/sign-in-guard";

/**
 * Failed sign-ins, one row each (the email named, the client address), in the store so every
 * instance and every restart sees the same counts. The rule (which counts, how long they hold a
 * sign-in back, when they are forgotten) is lib/auth/lockout.ts's; here they are kept and counted.
 */
const sqlite = {
  /** Keeps one failure and removes those at or before `forgetBefore` (the window has passed them). */
  recordSignInFailure(failure: { email: string; address: string; device?: string | null; at: number }, forgetBefore: number): Promise<void> {
    return serialized(() => {
      statement(`DELETE FROM "SignInFailure" WHERE at <= ?`).run(forgetBefore);
      statement(`INSERT INTO "SignInFailure" (at, email, address, device) VALUES (?, ?, ?, ?)`).run(failure.at, failure.email, failure.address, failure.device ?? null);
    });
  },

  /** The failures after `since` of this email from this address, of the email, of the address, and of the email from this device. */
  recentFailures(email: string, address: string, since: number, device: string | null = null): Promise<RecentFailures> {
    return serialized(() => countRecent(email, address, since, device));
  },

  /**
   * Counts an attempt's failures and, when `admit` lets it try its password, keeps it as a failure
   * at once, in one write transaction: attempts in flight count against the next one, so parallel
   * guesses cannot all be let through on the same count. The id is for withdrawing it; a correct
   * password forgets it with the pair's failures.
   */
  claimSignInAttempt(
    attempt: { email: string; address: string; device: string | null; at: number },
    since: number,
    admit: (recent: RecentFailures) => boolean,
  ): Promise<{ recent: RecentFailures; pending: number | null }> {
    return writeTransaction(() => {
      statement(`DELETE FROM "SignInFailure" WHERE at <= ?`).run(since);
      const recent = countRecent(attempt.email, attempt.address, since, attempt.device);
      if (!admit(recent)) return { recent, pending: null };
      const row = statement(`INSERT INTO "SignInFailure" (at, email, address, device) VALUES (?, ?, ?, ?)`).run(attempt.at, attempt.email, attempt.address, attempt.device);
      return { recent, pending: Number(row.lastInsertRowid) };
    });
  },

  /** Removes a kept attempt that was not a failure (the check itself failed). */
  withdrawSignInAttempt(id: number): Promise<void> {
    return serialized(() => {
      statement(`DELETE FROM "SignInFailure" WHERE id = ?`).run(id);
    });
  },

  /** Every failure after `since` by email and address (the People page's lockouts). */
  failuresSince(since: number): Promise<FailureGroup[]> {
    return serialized(
      () =>
        statement(`SELECT email, address, count(*) AS count, max(at) AS last FROM "SignInFailure" WHERE at > ? GROUP BY email, address ORDER BY email, address`).all(
          since,
        ) as FailureGroup[],
    );
  },

  /**
   * Forgets the failures of an email, of an address, or of an email from an address (an admin
   * lifting a lockout, a person signing in); how many.
   */
  forgetFailures(of: Forget): Promise<number> {
    const { where, params } = forgetWhere(of);
    return serialized(() => statement(`DELETE FROM "SignInFailure" WHERE ${where}`).run(...params).changes);
  },
};

function countRecent(email: string, address: string, since: number, device: string | null): RecentFailures {
  const count = (where: string, ...params: unknown[]) => {
    const row = statement(`SELECT count(*) AS count, max(at) AS last FROM "SignInFailure" WHERE ${where} AND at > ?`).get(...params, since) as { count: number; last: number | null };
    return { count: row.count, last: row.last };
  };
  return {
    pair: count(`email = ? AND address = ?`, email, address),
    account: count(`email = ?`, email),
    address: count(`address = ?`, address),
    device: device === null ? { count: 0, last: null } : count(`email = ? AND device = ?`, email, device),
  };
}

export const { recordSignInFailure, recentFailures, claimSignInAttempt, withdrawSignInAttempt, failuresSince, forgetFailures } = onEitherStore(sqlite, postgres);
