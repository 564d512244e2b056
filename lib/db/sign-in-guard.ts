import type { RecentFailures } from "@/lib/auth/lockout";
import { serialized } from "./client";
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
  recordSignInFailure(failure: { email: string; address: string; at: number }, forgetBefore: number): Promise<void> {
    return serialized(() => {
      statement(`DELETE FROM "SignInFailure" WHERE at <= ?`).run(forgetBefore);
      statement(`INSERT INTO "SignInFailure" (at, email, address) VALUES (?, ?, ?)`).run(failure.at, failure.email, failure.address);
    });
  },

  /** The failures after `since` of this email from this address, of the email, and of the address. */
  recentFailures(email: string, address: string, since: number): Promise<RecentFailures> {
    return serialized(() => {
      const count = (where: string, ...params: unknown[]) => {
        const row = statement(`SELECT count(*) AS count, max(at) AS last FROM "SignInFailure" WHERE ${where} AND at > ?`).get(...params, since) as { count: number; last: number | null };
        return { count: row.count, last: row.last };
      };
      return { pair: count(`email = ? AND address = ?`, email, address), account: count(`email = ?`, email), address: count(`address = ?`, address) };
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

export const { recordSignInFailure, recentFailures, failuresSince, forgetFailures } = onEitherStore(sqlite, postgres);
