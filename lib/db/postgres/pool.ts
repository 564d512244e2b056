import pg from "pg";
import { config, storeOf } from "../../config";
import { shared } from "@/lib/process-state";

/**
 * SQL here mirrors SQLite's answers: times cross as epoch ms (time.ts), and text is ordered by
 * `COLLATE "C"` (byte order, as SQLite's default BINARY), whatever the database's own collation.
 */

/**
 * The one pg Pool of this process on PostgreSQL, from DATABASE_URL, process-wide (lib/process-state.ts; like
 * client.ts's handles) so Next's dev reload and repeated imports share it. Raw SQL on PostgreSQL
 * goes through `pool()`, or `inTransaction()` when several statements must commit as one.
 */
interface PoolHandle {
  url: string;
  pool: pg.Pool;
}

const sharedForPool = shared<{ pgPool?: PoolHandle }>("pgPool", () => ({}));

const INT8 = 20;

/**
 * BIGINT (and so count(*) and the epoch ms of time.ts's msFromTimestamp) comes back as a number,
 * as it does from SQLite, instead of pg's default text. Every such value lib/db reads is a count
 * or an epoch ms, far below 2^53; one that is not would be silently rounded as a number, so it is
 * refused instead.
 */
export function int8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`a BIGINT of ${text} does not fit a JavaScript number exactly`);
  return value;
}

// Per pool rather than on pg's global `types`, so other pg clients (migrate-store's) keep pg's defaults.
export const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8 && format !== "binary" ? int8 : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

export function openPool(url: string): pg.Pool {
  // allowExitOnIdle: idle connections never keep the process alive; a process that ends closes them.
  const pool = new pg.Pool({ connectionString: url, types, allowExitOnIdle: true });
  // An idle connection the server drops (a restart, a failover) must not crash the process: the pool replaces it.
  pool.on("error", () => undefined);
  return pool;
}

/** The process-wide pool for the configured PostgreSQL URL (a new one when the URL changed, as in a test). */
export function pool(url = config().DATABASE_URL): pg.Pool {
  if (storeOf(url) !== "postgres") throw new Error(`the PostgreSQL pool needs a postgres:// DATABASE_URL, got "${url}"`);
  const open = sharedForPool.pgPool;
  if (open?.url === url) return open.pool;
  if (open) void open.pool.end().catch(() => undefined);
  sharedForPool.pgPool = { url, pool: openPool(url) };
  return sharedForPool.pgPool.pool;
}

/** Ends the pool (a clean shutdown, the end of a test); the next `pool()` opens a new one. */
export async function closePool(): Promise<void> {
  const open = sharedForPool.pgPool;
  sharedForPool.pgPool = undefined;
  await open?.pool.end();
}

/**
 * Runs `work` on one pooled connection inside BEGIN … COMMIT (ROLLBACK when it throws); `begin`
 * may name the transaction's modes in the same statement (sql.ts snapshotRead).
 */
export async function inTransaction<T>(work: (client: pg.PoolClient) => Promise<T>, begin = "BEGIN"): Promise<T> {
  const client = await pool().connect();
  try {
    return await withinTransaction(client, () => work(client), begin);
  } finally {
    client.release();
  }
}

/**
 * The one BEGIN … COMMIT of lib/db on PostgreSQL, on a connection the caller holds: ROLLBACK when
 * `work` throws (a failed rollback, on a connection already broken, is not the error to report).
 */
export async function withinTransaction<T>(client: pg.ClientBase, work: () => Promise<T>, begin = "BEGIN"): Promise<T> {
  await client.query(begin);
  try {
    const result = await work();
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
}
