import Database from "better-sqlite3";

/**
 * The WAL checkpointer: a thread of the server (checkpointer-thread.ts, started by
 * lib/server/listener/wal-checkpointer.ts) with its own connection to the SQLite file, copying the
 * pages that commits append to the WAL back into the database file. SQLite otherwise does it inside
 * the commit that takes the WAL past 1,000 pages, on the thread that committed: that held the
 * ingest thread for up to 204 ms at a time (`RADAR_BENCH_LOOP_TRACE=<file> npx tsx
 * scripts/bench-reads.ts` lists each stall; timing COMMIT beside it showed the one of 206.6 ms was
 * a commit of 203.8 ms). While this thread runs, the server's own connections leave checkpoints
 * to it (client.ts checkpointsByThread).
 *
 * A round has two steps:
 * - the copy (PASSIVE): every page no reader still needs, waiting for nobody and holding no lock a
 *   writer needs, so the writer never waits on it;
 * - once the WAL holds RESTART_FRAMES or more, the rest (FULL, never waiting: busy_timeout 0). A
 *   writer starts the WAL over from its beginning only when it finds every frame copied, and under
 *   steady ingestion a commit lands during nearly every copy: without this step the WAL file would
 *   grow for as long as ingestion lasts. It takes the write lock, but only for the few frames
 *   committed during the copy; a writer that holds the lock makes it give up until the next round.
 */
export interface CheckpointDone {
  /** Frames in the WAL, and how many of them are now in the database file. */
  walFrames: number;
  copied: number;
  /** Whether a reader's snapshot or a writer kept part of the WAL from being copied. */
  busy: boolean;
  /** How long the round took, on this thread. */
  ms: number;
  at: number;
}

/** What the checkpointer's thread is started with. */
export interface CheckpointerData {
  file: string;
  /** How often it runs a round. */
  everyMs: number;
}

/** From the checkpointer to the listener's thread: ready once its connection is open, then each round's checkpoint. */
export type CheckpointerMessage = { ready: true } | { checkpoint: CheckpointDone };

/** SQLite's own threshold for a checkpoint (wal_autocheckpoint's default): past it, a round copies the rest too. */
export const RESTART_FRAMES = 1_000;

type CheckpointRow = { busy: number; log: number; checkpointed: number };

/** The copy step of a round: what no reader still needs, waiting for nobody. */
export function copyWal(sql: Database.Database): CheckpointRow {
  return (sql.pragma("wal_checkpoint(PASSIVE)") as CheckpointRow[])[0];
}

/**
 * The second step: once the WAL is long, the frames committed during the copy too, whenever no
 * writer holds the lock. A unit of work holds it for its whole length (tens of milliseconds for a
 * batch), so the step looks for a moment between two, every REST_RETRY_MS for REST_TRIES tries.
 * It never waits on a lock itself (`sql` has busy_timeout 0): once it holds the writer's, a wait
 * would hold up the writer.
 */
export function copyRest(sql: Database.Database, copied: CheckpointRow, tries = REST_TRIES): CheckpointRow {
  if (copied.log < RESTART_FRAMES) return copied;
  let row = copied;
  for (let i = 0; i < tries; i++) {
    if (i > 0) Atomics.wait(pause, 0, 0, REST_RETRY_MS);
    row = (sql.pragma("wal_checkpoint(FULL)") as CheckpointRow[])[0];
    if (row.busy === 0) break;
  }
  return row;
}

const REST_TRIES = 25;
const REST_RETRY_MS = 2;
/** What the checkpointer's thread sleeps on between tries (nothing ever wakes it early). */
const pause = new Int32Array(new SharedArrayBuffer(4));

/** One round on `sql`, a connection opened by openCheckpointer. */
export function checkpointWal(sql: Database.Database, now = Date.now): CheckpointDone {
  const started = performance.now();
  const row = copyRest(sql, copyWal(sql));
  const walFrames = Math.max(0, row.log);
  return { walFrames, copied: Math.min(walFrames, Math.max(0, row.checkpointed)), busy: row.busy !== 0, ms: +(performance.now() - started).toFixed(1), at: now() };
}

/** The checkpointer's connection: never waits for a lock (a writer that holds one is left to finish). */
export function openCheckpointer(file: string): Database.Database {
  return new Database(file, { fileMustExist: true, timeout: 0 });
}

/**
 * The checkpointer's work: opens `file` (which must exist: the listener's thread migrated it) and
 * runs a round every `everyMs`, telling `port` of each. An error (the disk failing) ends the
 * thread, and the listener's thread checkpoints on commit again until it restarts. Returns what
 * stops it (for tests; the thread itself runs until it is terminated).
 */
export function runCheckpointer(file: string, everyMs: number, port: { postMessage(message: CheckpointerMessage): void }): () => void {
  const sql = openCheckpointer(file);
  port.postMessage({ ready: true });
  const timer = setInterval(() => port.postMessage({ checkpoint: checkpointWal(sql) }), everyMs);
  return () => {
    clearInterval(timer);
    sql.close();
  };
}
