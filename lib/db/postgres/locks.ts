import type pg from "pg";

/**
 * What keeps units of work of several instances from interleaving wrongly on PostgreSQL. Within
 * one process they already run one at a time (lib/db/postgres/unit-of-work.ts); across processes
 * each takes, inside its transaction and so until its commit or rollback:
 *
 * - the lock of each thread it reads to change: the thread's row, `SELECT … FOR UPDATE`, so two
 *   instances stepping the same thread (a batch on one, the watchdog or a stop on the other) take
 *   turns and the second reads the state the first committed.
 * - the lock of a source (an advisory lock on the source id) while it checks the batch's
 *   idempotency keys: resends of one batch to two instances store it once, the later one finding
 *   the keys the other committed, instead of one failing on the unique key. The same lock covers
 *   finding a thread by its key, which a row lock cannot cover when the thread does not exist yet:
 *   two instances receiving a new thread's first lines at once create it once. A batch takes it
 *   once (txLocks), so its threads cost no lock statement each.
 *
 * - the incidents' lock (one advisory lock) while a unit of work reads the open incidents to fold its
 *   notices in or close quiet ones: incidents are advanced as a whole (lib/retry/incidents.ts), so two
 *   instances doing it at once would each write their own view, losing notices, or close an incident
 *   and send its alert twice (two watchdog passes during a change of leader). The second reads what
 *   the first committed.
 *
 * Advisory rather than row locks for keys, because they need no row; transaction-scoped, because a
 * pooled connection must never keep one.
 *
 * What could still deadlock, and why it does not: a batch locks its threads together in id order
 * (thread-state.ts expectThreads) after its source's lock, which it holds throughout, so two
 * batches of one source never interleave; the watchdog locks a pass's due threads one by one in
 * wake order, and retries them one per unit of work when the pass fails. The rows every
 * thread shares (rollup counters) are written last, in the order of their keys (rollups.ts), so a
 * unit of work waiting for a thread holds none of them. Should two units of work still meet in
 * opposite orders (a join reaching another thread, incidents), PostgreSQL aborts one with a
 * deadlock error: it rolls back whole, and its sender retries (the watchdog on its next tick; the
 * error counts as the store's, lib/db/store-failure.ts, so no thread is quarantined for it).
 */

/**
 * The whole-database locks (the one-key form, a key space apart from the two-key form below), one
 * number each and all here: two roles sharing a number wait on each other (a start's turn on the
 * watchdog's key would wait forever while another instance leads).
 * - migration: migrators take turns (migrate.ts), per migration, transaction-scoped;
 * - watchdog: the watchdog's leader holds it while it leads (leader.ts), session-scoped;
 * - start: a start's seeding of the first source and admin (open-store.ts), session-scoped.
 */
export const DATABASE_LOCKS = { migration: 7_318_004_211, watchdog: 7_318_004_212, start: 7_318_004_213 } as const;

// Namespaces (the first key of the two-key form).
const SOURCE_LOCK = 7_318_101;
const INCIDENTS_LOCK = 7_318_102;
const SIGN_IN_LOCK = 7_318_103;

export async function lockSource(client: pg.ClientBase, sourceId: string): Promise<void> {
  await client.query(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, [SOURCE_LOCK, sourceId]);
}

export async function lockIncidents(client: pg.ClientBase): Promise<void> {
  await client.query(`SELECT pg_advisory_xact_lock($1, 0)`, [INCIDENTS_LOCK]);
}

/**
 * Sign-in attempts take turns while one is counted and kept (sign-in-guard.ts): per-address and
 * per-account counts span emails and addresses, so one key for all; the turn is two short statements.
 */
export async function lockSignIns(client: pg.ClientBase): Promise<void> {
  await client.query(`SELECT pg_advisory_xact_lock($1, 0)`, [SIGN_IN_LOCK]);
}

export type TxLocks = ReturnType<typeof txLocks>;

/** The source locks one unit of work on `client` holds: each taken once, held to its commit. */
export function txLocks(client: pg.ClientBase) {
  const sources = new Set<string>();
  return {
    async source(sourceId: string): Promise<void> {
      if (sources.has(sourceId)) return;
      await lockSource(client, sourceId);
      sources.add(sourceId);
    },
  };
}
