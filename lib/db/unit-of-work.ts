import { alertRows } from "./alerts";
import { auditRows } from "./audit";
import { db, serialized } from "./client";
import { directiveRows } from "./directives";
import { episodeRows } from "./episodes";
import { incidentRows } from "./incidents";
import { limitRows } from "./limits";
import { eventRows } from "./events";
import { quarantineRows } from "./quarantine";
import { rollupRows } from "./rollups";
import { sourceRows } from "./sources";
import { threadJoinRows } from "./thread-join";
import { postgresTransaction } from "./postgres/unit-of-work";
import { currentStore } from "./store";
import { threadRows } from "./thread-state";

/**
 * A unit of work: an ingest batch, an operator action or a watchdog pass, committed as one.
 *
 * The contract, for this SQLite store and for any other behind lib/db:
 * - `transaction(work)` is asynchronous for its callers; it resolves once `work`'s writes are
 *   committed (rejects, with nothing written, when `work` throws or rejects).
 * - Units of work never interleave, with each other or with any other use of the connection:
 *   each starts after everything queued before it has ended (the queue in client.ts).
 * - `work` receives the transaction's handle, `Tx`, does everything through it, and awaits every
 *   call: a `Tx` method may answer with a value or a promise. On SQLite (better-sqlite3: one
 *   connection, a single writer) every method answers synchronously and the awaits only pass
 *   through microtasks: the event loop takes no new request until the unit of work commits, and
 *   the queue keeps every other use of the connection out until then. On PostgreSQL (node-postgres,
 *   lib/db/postgres/unit-of-work.ts) each unit of work gets a pooled connection inside BEGIN …
 *   COMMIT and a `Tx` whose methods return promises; the pipeline, which already awaits them, does
 *   not change. Units of work of one process still run one after another (a queue of their own);
 *   those of several instances on one database lock the threads and sources they change
 *   (lib/db/postgres/locks.ts).
 */
const sqliteTx = { ...eventRows, ...threadRows, ...episodeRows, ...directiveRows, ...sourceRows, ...auditRows, ...quarantineRows, ...limitRows, ...incidentRows, ...threadJoinRows, ...alertRows, noticesSeen: rollupRows.noticesSeen, noticeFacts: rollupRows.noticeFacts };

type Awaitable<T> = T | Promise<T>;

/** The handle of a unit of work: every store operation it may use, each answering now or later. */
export type Tx = {
  [K in keyof typeof sqliteTx]: (...args: Parameters<(typeof sqliteTx)[K]>) => Awaitable<ReturnType<(typeof sqliteTx)[K]>>;
};

/** Runs `work` as one unit of work on the store DATABASE_URL names (lib/db/postgres/unit-of-work.ts for PostgreSQL). */
export function transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
  return currentStore() === "postgres" ? postgresTransaction(work) : sqliteTransaction(work);
}

function sqliteTransaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
  return serialized(async () => {
    const { sql } = db();
    // IMMEDIATE: take the write lock now, so the commit can never fail on a busy database.
    sql.exec("BEGIN IMMEDIATE");
    try {
      const result = await work(sqliteTx);
      sql.exec("COMMIT");
      return result;
    } catch (error) {
      if (sql.inTransaction) sql.exec("ROLLBACK");
      throw error;
    }
  });
}
