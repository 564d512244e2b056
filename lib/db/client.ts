import Database from "better-sqlite3";
import { PrismaBetterSqlite3 } from "@prisma/adapter-better-sqlite3";
import { PrismaClient } from "./generated/client";
import { resolveDatabasePath } from "./config";
import { migrate } from "./migrate";
import { processQueue } from "./queue";
import { isSqliteBusy } from "./sqlite-busy";
import { shared } from "@/lib/process-state";

/**
 * The one place that opens the database. Two handles on the same WAL file:
 * - `sql`: a raw better-sqlite3 connection for every write and the hot paths (ingestion,
 *   directives, insights, exports, metrics): prepared statements in one transaction per batch,
 *   far faster than Prisma's per-row writes;
 * - `prisma`: the Prisma client, for the authentication library's tables and three thread
 *   lookups (threads.ts: by agent id, Stop all's keys, existence).
 * Both are process-wide (lib/process-state.ts): every copy of this module reuses one connection.
 *
 * Every write transaction begins IMMEDIATE (`.immediate()`, unit-of-work.ts's BEGIN IMMEDIATE,
 * Prisma's through beginsImmediate below): other processes write the same file on connections of
 * their own (`npm run users`, `npm run keys`, `npm run rollups`), and a deferred transaction that
 * read before such a commit could never take the write lock.
 */
export interface DatabaseHandles {
  path: string;
  sql: Database.Database;
  prisma: InstanceType<typeof PrismaClient>;
}

const BUSY_TIMEOUT_MS = 5_000;
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;
const sharedForDb = shared<{ db?: DatabaseHandles }>("db", () => ({}));

export function openDatabase(file = resolveDatabasePath()): DatabaseHandles {
  const sql = new Database(file, { timeout: BUSY_TIMEOUT_MS });
  sql.pragma("journal_mode = WAL");
  // In WAL mode NORMAL keeps every commit across a crash of the process (it is in the WAL, in the
  // OS's page cache) and syncs only at checkpoints; power loss may roll back the last commits.
  sql.pragma("synchronous = NORMAL");
  sql.pragma("foreign_keys = ON");
  // Checkpoints are SQLite's own (wal_autocheckpoint, 1,000 pages by default): the commit that
  // passes it copies the WAL back into the file, and the WAL starts over once no reader needs it.
  // One that readers let grow is cut back to this size when it starts over.
  sql.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  migrate(sql);
  sql.pragma(TEMP_IN_MEMORY);
  const prisma = new PrismaClient({
    adapter: writesQueued(new PrismaBetterSqlite3({ url: file, timeout: BUSY_TIMEOUT_MS }, { timestampFormat: "unixepoch-ms" })),
  });
  return { path: file, sql, prisma };
}

/**
 * This connection's temporary b-trees (the GROUP BYs, IN lists and materialized CTEs of a unit of
 * work's queries, a group member's statement journal) stay in memory, once the migrations ran:
 * set up for SQLite's temporary files, each cost the allocation of a page cache (the rollups'
 * facts query of a batch of 500 events, on a copy of profile-ingest's database: 0.85 → 0.7 ms,
 * 0.56 → 0.13 ms when it finds nothing), and a statement journal past 64 KiB became a file. In
 * memory they have no bound: the queries of this connection stay small (units of work, pages of
 * reads, retention's chunks), and the one over all history, the rollups' rebuild, runs with them
 * on disk again (withTempOnDisk). Read-only connections keep SQLite's default.
 */
const TEMP_IN_MEMORY = "temp_store = MEMORY";

/** Runs `work` with the connection's temporary b-trees on disk, as SQLite's default: outside any transaction (SQLite refuses the switch inside one). */
export function withTempOnDisk<T>(sql: Database.Database, work: () => T): T {
  sql.pragma("temp_store = FILE");
  try {
    return work();
  } finally {
    sql.pragma(TEMP_IN_MEMORY);
  }
}

/**
 * A read-only connection to the same file for a thread that only reads (the read worker,
 * read-worker.ts), made that thread's db() so every reader in lib/db runs there unchanged. It
 * never migrates (the server's connection did) and has no Prisma client.
 */
export function openReadOnly(file: string): DatabaseHandles {
  const sql = new Database(file, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
  sharedForDb.db = {
    path: file,
    sql,
    get prisma(): never {
      throw new Error("the read worker has no Prisma client: its reads use the raw connection");
    },
  };
  return sharedForDb.db;
}

/**
 * BEGIN IMMEDIATE on the writer connection, never sleeping on the thread while another
 * connection holds the write lock (a command-line import, another process). SQLite's own busy
 * handler would sleep where it is called, in growing steps, and the event loop that takes every
 * request would answer nothing meanwhile (up to BUSY_TIMEOUT_MS). Here each attempt fails at once, and the next comes after a timer of a
 * millisecond, the event loop free in between; after BUSY_TIMEOUT_MS the last SQLITE_BUSY is
 * thrown, as SQLite's handler would have.
 */
export async function beginImmediate(sql: Database.Database, timeoutMs = BUSY_TIMEOUT_MS): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  const own = ownBusyTimeout(sql);
  for (;;) {
    // exec, not a kept statement: SQLite applies a busy_timeout pragma when it is prepared.
    sql.exec("PRAGMA busy_timeout = 0");
    try {
      sql.exec("BEGIN IMMEDIATE");
      return;
    } catch (error) {
      if (!isSqliteBusy(error) || performance.now() >= deadline) throw error;
    } finally {
      sql.exec(`PRAGMA busy_timeout = ${own}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

/** Each connection's own busy timeout, read once (it is set when the connection opens). */
const ownBusyTimeouts = new WeakMap<Database.Database, number>();

function ownBusyTimeout(sql: Database.Database): number {
  let own = ownBusyTimeouts.get(sql);
  if (own === undefined) {
    own = sql.pragma("busy_timeout", { simple: true }) as number;
    ownBusyTimeouts.set(sql, own);
  }
  return own;
}

/** The process-wide database, opened (and migrated) on first use. */
export function db(): DatabaseHandles {
  sharedForDb.db ??= openDatabase();
  return sharedForDb.db;
}

/**
 * Every use of the writer connection (`sql`) goes through this queue, one after another in call
 * order, so no read or write ever lands inside another caller's unit of work (see
 * unit-of-work.ts). A queued function may be asynchronous (a unit of work awaits its `Tx`); the
 * next one starts when its promise settles.
 */
const writerQueue = processQueue("writerQueue");

export function serialized<T>(fn: () => T | Promise<T>): Promise<T> {
  return writerQueue.run(fn);
}

/**
 * A write transaction on the writer connection, queued like every use of it: `write` runs whole
 * (synchronously) between BEGIN IMMEDIATE, taken without holding the thread (beginImmediate), and
 * COMMIT; a throw rolls it back and rejects.
 */
export function writeTransaction<T>(write: (sql: Database.Database) => T): Promise<T> {
  return serialized(async () => {
    const { sql } = db();
    await beginImmediate(sql);
    try {
      const value = write(sql);
      // COMMIT follows at once: work that is still to come would land outside the transaction.
      if (value instanceof Promise) throw new Error("writeTransaction takes synchronous work only");
      sql.exec("COMMIT");
      return value;
    } catch (error) {
      try {
        if (sql.inTransaction) sql.exec("ROLLBACK");
      } catch {
        // The connection is unusable; the error that brought us here is the one to report.
      }
      throw error;
    }
  });
}

/** Whether `queued` (a promise serialized() returned) is the last thing queued: nothing was queued after it. */
export function isWriterTail(queued: Promise<unknown>): boolean {
  return writerQueue.isTail(queued);
}

type PrismaAdapter = Awaited<ReturnType<PrismaBetterSqlite3["connect"]>>;
type PrismaTransaction = Awaited<ReturnType<PrismaAdapter["startTransaction"]>>;

/**
 * Prisma's connection (the authentication library writes its sessions and people through it) is
 * a second writer on the same file. A group of units of work holds the write lock across turns of
 * the event loop (unit-of-work.ts), and better-sqlite3 waits for a busy lock by blocking the
 * thread, which would hold up the very group it waits for. So Prisma's writes, and its
 * transactions from BEGIN to COMMIT, take their turn in the writer queue; its reads (SELECT) see
 * committed rows (WAL) and run at once.
 */
function writesQueued(factory: PrismaBetterSqlite3): PrismaBetterSqlite3 {
  const connect = factory.connect.bind(factory);
  return Object.assign(factory, { connect: async () => queuedAdapter(await connect()) });
}

const READ = /^\s*SELECT\b/i;

/** The better-sqlite3 connection under Prisma's adapter. */
function connectionOf(adapter: PrismaAdapter): Database.Database {
  const client = (adapter as unknown as { client?: Database.Database }).client;
  if (!client) throw new Error("Prisma's SQLite adapter no longer exposes its connection: its transactions cannot begin IMMEDIATE");
  return client;
}

/** Prisma starts its transactions with a plain BEGIN (deferred): made BEGIN IMMEDIATE, as every write transaction here (above). */
function beginsImmediate(adapter: PrismaAdapter): void {
  const client = connectionOf(adapter);
  const prepare = client.prepare.bind(client);
  client.prepare = ((source: string) => prepare(source === "BEGIN" ? "BEGIN IMMEDIATE" : source)) as typeof client.prepare;
}

function queuedAdapter(adapter: PrismaAdapter): PrismaAdapter {
  beginsImmediate(adapter);
  const overrides: Partial<PrismaAdapter> = {
    queryRaw: (query) => (READ.test(query.sql) ? adapter.queryRaw(query) : serialized(() => adapter.queryRaw(query))),
    executeRaw: (query) => serialized(() => adapter.executeRaw(query)),
    executeScript: (script) => serialized(() => adapter.executeScript(script)),
    startTransaction: async (isolationLevel) => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      await new Promise<void>((entered) => void serialized(() => (entered(), held)));
      let transaction: PrismaTransaction;
      try {
        transaction = await adapter.startTransaction(isolationLevel);
      } catch (error) {
        release();
        throw error;
      }
      const ending = (end: () => Promise<void>) => () => end().finally(release);
      return forwarding(transaction, { commit: ending(() => transaction.commit()), rollback: ending(() => transaction.rollback()) });
    },
  };
  return forwarding(adapter, overrides);
}

/** `target` with some methods replaced; the others are called on `target` itself (its private fields need it). */
function forwarding<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(object, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof T];
      const value = Reflect.get(object, property, object);
      return typeof value === "function" ? value.bind(object) : value;
    },
  });
}

/**
 * A pure read that needs no unit of work in progress (an API key's lookup, the incident list)
 * runs at once, outside the queue, on a read-only connection of its own: like Prisma's, it sees
 * only committed rows (WAL), so it never waits behind ingestion and never sees a batch half done.
 * In the read worker, whose connection is already read-only and unqueued, it is that connection.
 */
const sharedForCommittedReads = shared<{ committedReads?: { path: string; sql: Database.Database } }>("committedReads", () => ({}));

export function committedRead<T>(fn: (sql: Database.Database) => T): Promise<T> {
  try {
    return Promise.resolve(fn(readConnection()));
  } catch (error) {
    return Promise.reject(error);
  }
}

function readConnection(): Database.Database {
  const handles = db();
  if (handles.sql.readonly) return handles.sql;
  const open = sharedForCommittedReads.committedReads;
  if (open?.path === handles.path && open.sql.open) return open.sql;
  open?.sql.close();
  const sql = new Database(handles.path, { readonly: true, fileMustExist: true, timeout: BUSY_TIMEOUT_MS });
  sharedForCommittedReads.committedReads = { path: handles.path, sql };
  return sql;
}

/** Closes the process-wide handles, if open (the end of a test); the next db() opens them again. */
export async function closeDatabase(): Promise<void> {
  const handles = sharedForDb.db;
  sharedForDb.db = undefined;
  sharedForCommittedReads.committedReads?.sql.close();
  sharedForCommittedReads.committedReads = undefined;
  if (!handles) return;
  if (!handles.sql.readonly) await handles.prisma.$disconnect();
  handles.sql.close();
}
