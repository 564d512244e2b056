import { db, serialized } from "./client";
import { directiveRows } from "./directives";
import { episodeRows } from "./episodes";
import { eventRows } from "./events";
import { sourceRows } from "./sources";
import { threadRows } from "./thread-state";

/**
 * A unit of work: an ingest batch, an operator action or a watchdog pass, committed as one.
 *
 * The contract, for this SQLite store and for any other behind lib/db:
 * - `transaction(work)` is asynchronous for its callers; it resolves once `work`'s writes are
 *   committed (rejects, with nothing written, when `work` throws).
 * - Units of work never interleave, with each other or with any other use of the connection:
 *   each starts after everything queued before it has ended (the queue in client.ts).
 * - `work` receives the transaction's handle, `Tx`, and does everything through it. On SQLite
 *   (better-sqlite3: one connection, a single writer) `Tx` and `work` are synchronous: a
 *   better-sqlite3 transaction cannot span an `await`, and nothing else may run on the
 *   connection while it is open. So the pipeline computes a whole unit of work synchronously
 *   against `Tx` and only the outer interface is a promise.
 * - A database with an asynchronous driver (PostgreSQL through node-postgres) gives each unit
 *   of work its own pooled connection inside BEGIN … COMMIT and its own `Tx` over it, behind the
 *   same `transaction()`; its `Tx` methods return promises, which the pipeline's `work` then
 *   awaits.
 */
const sqliteTx = { ...eventRows, ...threadRows, ...episodeRows, ...directiveRows, ...sourceRows };

export type Tx = typeof sqliteTx;

export function transaction<T>(work: (tx: Tx) => T): Promise<T> {
  return serialized(() => db().sql.transaction(() => work(sqliteTx))());
}
