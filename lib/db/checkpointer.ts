import Database from "better-sqlite3";

/**
 * The WAL checkpointer: a thread of the server (started by lib/server/listener/wal-checkpointer.ts)
 * with its own connection to the SQLite file, copying the pages that commits append to the WAL
 * back into the database file. SQLite otherwise does it inside the commit that takes the WAL past
 * 1,000 pages, on the thread that committed: copying them and syncing the file held the ingest
 * thread for up to 200 ms at a time (`RADAR_BENCH_LOOP_TRACE=<file> npx tsx scripts/bench-reads.ts`
 * lists each stall beside the commit that caused it). While this thread runs, the server's own
 * connections never checkpoint (client.ts checkpointsByThread).
 *
 * Each checkpoint is PASSIVE: it copies what no reader still needs and waits for nobody, so the
 * writer never waits on it. A reader that holds an old snapshot (an export) only delays the copy
 * of later pages to a later round.
 */
export interface CheckpointDone {
  /** Frames in the WAL, and how many of them are now in the database file. */
  walFrames: number;
  copied: number;
  /** How long the checkpoint took, on this thread. */
  ms: number;
  at: number;
}

/** From the checkpointer to the listener's thread: ready once its connection is open, then each round's checkpoint. */
export type CheckpointerMessage = { ready: true } | { checkpoint: CheckpointDone };

/** One PASSIVE checkpoint on `sql`. */
export function checkpointWal(sql: Database.Database, now = Date.now): CheckpointDone {
  const started = performance.now();
  const [row] = sql.pragma("wal_checkpoint(PASSIVE)") as { busy: number; log: number; checkpointed: number }[];
  return { walFrames: Math.max(0, row.log), copied: Math.max(0, row.checkpointed), ms: +(performance.now() - started).toFixed(1), at: now() };
}

/**
 * The checkpointer's work: opens `file` (which must exist: the listener's thread migrated it) and
 * checkpoints every `everyMs`, telling `port` of each. An error (the disk failing) ends the
 * thread, and the listener's thread checkpoints on commit again until it restarts. Returns what
 * stops it (for tests; the thread itself runs until it is terminated).
 */
export function runCheckpointer(file: string, everyMs: number, port: { postMessage(message: CheckpointerMessage): void }): () => void {
  const sql = new Database(file, { fileMustExist: true });
  port.postMessage({ ready: true });
  const timer = setInterval(() => port.postMessage({ checkpoint: checkpointWal(sql) }), everyMs);
  return () => {
    clearInterval(timer);
    sql.close();
  };
}
