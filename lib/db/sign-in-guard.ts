import { serialized } from "./client";
import * as postgres from "./postgres/sign-in-guard";
import { statement } from "./statement";
import type { GuardState } from "./records/sign-in-guard";
import { onEitherStore } from "./store";

export type { GuardState } from "./records/sign-in-guard";

/**
 * Failed sign-ins in a row per key ("account:<email>", "address:<ip>") and the lockout they
 * caused. The rule (how many, how long) is lib/auth/sign-in.ts's; here the counts are kept.
 */
const sqlite = {
  guardStates(keys: string[]): Promise<Map<string, GuardState>> {
    return serialized(() => {
      const out = new Map<string, GuardState>();
      for (const key of keys) {
        const row = statement(`SELECT failures, lockedUntil FROM "SignInGuard" WHERE key = ?`).get(key) as GuardState | undefined;
        if (row) out.set(key, row);
      }
      return out;
    });
  },

  /** Counts one more failure for each key; `lockFor(failures)` says how long (ms) that many lock it, or null. */
  countFailure(keys: string[], now: number, lockFor: (key: string, failures: number) => number | null): Promise<Map<string, GuardState>> {
    return serialized(() => {
      const out = new Map<string, GuardState>();
      for (const key of keys) {
        const row = statement(
          `INSERT INTO "SignInGuard" (key, failures, lastFailureAt) VALUES (?, 1, ?)
           ON CONFLICT(key) DO UPDATE SET failures = failures + 1, lastFailureAt = excluded.lastFailureAt RETURNING failures, lockedUntil`,
        ).get(key, now) as GuardState;
        const lock = lockFor(key, row.failures);
        if (lock !== null) {
          statement(`UPDATE "SignInGuard" SET lockedUntil = ? WHERE key = ?`).run(now + lock, key);
          row.lockedUntil = now + lock;
        }
        out.set(key, row);
      }
      return out;
    });
  },

  /** Forgets the failures of these keys (a successful sign-in, or an admin lifting a lockout). */
  clearGuards(keys: string[]): Promise<number> {
    return serialized(() => {
      let n = 0;
      for (const key of keys) n += statement(`DELETE FROM "SignInGuard" WHERE key = ?`).run(key).changes;
      return n;
    });
  },

  /** Keys locked out now (for the People page). */
  lockedGuards(now = Date.now()): Promise<{ key: string; failures: number; lockedUntil: number }[]> {
    return serialized(() => statement(`SELECT key, failures, lockedUntil FROM "SignInGuard" WHERE lockedUntil > ? ORDER BY key`).all(now) as { key: string; failures: number; lockedUntil: number }[]);
  },
};

export const { guardStates, countFailure, clearGuards, lockedGuards } = onEitherStore(sqlite, postgres);
