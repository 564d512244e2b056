import type Database from "better-sqlite3";

/**
 * WAL checkpoints off the writer's thread. Left to itself, SQLite checkpoints in the commit that
 * takes the WAL past 1,000 pages: that commit copies them into the database and waits for two
 * fsyncs, tens of milliseconds during which the one thread that ingests does nothing else. Here
 * a worker thread with a connection of its own checkpoints the committed pages every
 * CHECKPOINT_EVERY_MS (PASSIVE: it never blocks the writer or a reader), and the writer's own
 * checkpoint stays only as a backstop, at BACKSTOP_PAGES, should the worker fall behind or stop.
 */
const CHECKPOINT_EVERY_MS = 250;
const BACKSTOP_PAGES = 10_000;
/** SQLite's default, kept when no worker checkpoints. */
const DEFAULT_PAGES = 1_000;

// Plain JavaScript evaluated in the worker: no entry file for Next's bundler to take over
// (better-sqlite3 is resolved from the working directory, as the server runs from the app's root).
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require("better-sqlite3");
const sql = new Database(workerData.file, { timeout: ${CHECKPOINT_EVERY_MS} });
setInterval(() => {
  try {
    sql.pragma("wal_checkpoint(PASSIVE)");
  } catch {
    // Busy or locked: the next round tries again; the writer's backstop bounds the WAL meanwhile.
  }
}, ${CHECKPOINT_EVERY_MS});
parentPort.postMessage("ready");
`;

/** Starts the checkpointing worker for the writer connection `sql` of database `file`. */
export function startCheckpointer(sql: Database.Database, file: string): void {
  // Out of the bundler's sight, as in lib/server/off-thread.ts.
  const { Worker } = process.getBuiltinModule("node:worker_threads");
  let worker: InstanceType<typeof Worker>;
  try {
    worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file } });
  } catch (error) {
    process.stderr.write(`[radar] WAL checkpoints stay on the writer: ${(error as Error).message}\n`);
    return;
  }
  worker.unref();
  worker.once("message", () => {
    if (sql.open) sql.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  });
  worker.once("error", (error) => process.stderr.write(`[radar] WAL checkpoints back on the writer: ${error.message}\n`));
  worker.once("exit", () => {
    if (sql.open) sql.pragma(`wal_autocheckpoint = ${DEFAULT_PAGES}`);
  });
}
