import Database from "better-sqlite3";
import { isSqliteBusy } from "./sqlite-busy";

/**
 * The WAL checkpointer: a thread of the server (checkpointer-thread.ts, started by
 * lib/server/listener/wal-checkpointer.ts) with its own connections to the SQLite file, copying the
 * pages that commits append to the WAL back into the database file. SQLite otherwise does it inside
 * the commit that takes the WAL past 1,000 pages, on the thread that committed: that held the
 * ingest thread for up to 204 ms at a time (`RADAR_BENCH_LOOP_TRACE=<file> npx tsx
 * scripts/bench-reads.ts` lists each stall; timing COMMIT beside it showed the one of 206.6 ms was
 * a commit of 203.8 ms). While this thread runs, the server's own connections leave checkpoints
 * to it (client.ts checkpointsByThread).
 *
 * It also decides when the WAL starts over, and on which thread. A commit that finds every frame
 * copied starts the WAL from its beginning again, and SQLite then syncs the WAL's header to disk
 * inside that commit: with a copy every round, the ingest thread's first commit after nearly every
 * round would. Each such fsync waits for whatever the kernel is writing back to the same disk (up
 * to 393 ms behind the writeback of a 745 MB file, seen with `perf record -e sched:sched_switch`
 * during scripts/bench-reads.ts), and the ingest thread's event loop with it. So the checkpointer
 * keeps a read snapshot open on a connection of its own, taken just before each copy: the copy
 * still takes every frame (the snapshot needs none that are not in the file once it is copied),
 * but no writer can start the WAL over while a snapshot that began inside it is open, so commits
 * append. Once the WAL holds START_OVER_FRAMES, a round lets go of it, copies the rest and makes
 * the commit that starts the WAL over itself.
 *
 * A round:
 * - the copy (PASSIVE): every frame no reader still needs, waiting for nobody and holding no lock a
 *   writer needs, so the writer never waits on it; when commits appended frames since the
 *   snapshot was taken, the snapshot is taken again first, so that the copy can take them;
 * - once the WAL holds START_OVER_FRAMES or more: the snapshot is let go, and as soon as a copy
 *   takes every frame, a commit of this thread starts the WAL over (startOverStep), holding the write
 *   lock for the fsync of the WAL's header. Without this step the WAL would grow for as long as
 *   ingestion lasts; a writer that holds the lock, or readers that never let every frame be
 *   copied, make it give up until the next round.
 */
export interface CheckpointDone {
  /** Frames in the WAL, and how many of them are now in the database file. */
  walFrames: number;
  copied: number;
  /** Whether another connection was checkpointing, so that this round could copy nothing. */
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

/** From the checkpointer to the listener's thread: ready once its connections are open, then each round's checkpoint. */
export type CheckpointerMessage = { ready: true } | { checkpoint: CheckpointDone };

/**
 * Past this many frames a round lets the WAL start over: 8,192 pages of 4 KiB are 32 MiB, under
 * WAL_SIZE_LIMIT_BYTES (64 MiB, past which each start would cut the file back) and far under
 * client.ts's backstop (BACKSTOP_PAGES, past which commits checkpoint themselves).
 */
export const START_OVER_FRAMES = 8_192;

type CheckpointRow = { busy: number; log: number; checkpointed: number };

/** The checkpointer's connections to one file: `sql` copies; `snapshot` only ever holds a read transaction open. */
export interface Checkpointer {
  sql: Database.Database;
  snapshot: Database.Database;
}

/** A WAL that grew past this (readers kept it from starting over) is cut back to it by the commit that starts it over. */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/** The checkpointer's connections: they never wait for a lock (a writer that holds one is left to finish). */
export function openCheckpointer(file: string): Checkpointer {
  const sql = new Database(file, { fileMustExist: true, timeout: 0 });
  // As the server's connections (client.ts): its commit (startOver) syncs the WAL's header, not
  // every frame too, and cuts the file back as theirs would; it never checkpoints on commit.
  sql.pragma("synchronous = NORMAL");
  sql.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  sql.pragma("wal_autocheckpoint = 0");
  const snapshot = new Database(file, { readonly: true, fileMustExist: true, timeout: 0 });
  return { sql, snapshot };
}

export function closeCheckpointer({ sql, snapshot }: Checkpointer): void {
  letGo(snapshot);
  snapshot.close();
  sql.close();
}

/** The copy step's checkpoint: what no reader still needs, waiting for nobody. */
function copyWal(sql: Database.Database): CheckpointRow {
  return (sql.pragma("wal_checkpoint(PASSIVE)") as CheckpointRow[])[0];
}

/** The WAL's counts as they are, copying nothing (and taking no lock). */
function walNow(sql: Database.Database): CheckpointRow {
  return (sql.pragma("wal_checkpoint(NOOP)") as CheckpointRow[])[0];
}

/**
 * A read transaction from now on, on `snapshot`: the statement reads the schema's page, which is
 * what starts it. Where the file cannot be read this moment (SQLITE_BUSY: a recovery under way, a
 * process holding it exclusively) the round goes on without one, as a copy alone would.
 */
function takeSnapshot(snapshot: Database.Database): void {
  letGo(snapshot);
  try {
    snapshot.exec("BEGIN");
    snapshot.prepare("SELECT count(*) FROM sqlite_schema").get();
  } catch (error) {
    letGo(snapshot);
    if (!isSqliteBusy(error)) throw error;
  }
}

function letGo(snapshot: Database.Database): void {
  if (snapshot.inTransaction) snapshot.exec("COMMIT");
}

/**
 * The copy step. The snapshot is taken before the copy when none is held, and again when commits
 * appended frames past the one held (a snapshot keeps back every frame committed after it began).
 * One taken when every frame was already copied reads only the database file: it neither keeps the
 * WAL from starting over (once, which is when that happens) nor lets a copy write into the file,
 * and the next round takes another.
 */
export function copyStep({ sql, snapshot }: Checkpointer): CheckpointRow {
  if (!snapshot.inTransaction) {
    // Long enough to start over (a round that gave up, say): startOverStep does, with no snapshot.
    const now = walNow(sql);
    if (now.log >= START_OVER_FRAMES) return now;
    takeSnapshot(snapshot);
  }
  const row = copyWal(sql);
  if (row.checkpointed >= row.log) return row;
  takeSnapshot(snapshot);
  return copyWal(sql);
}

/**
 * The second step, once the WAL is long: the snapshot is let go, and in a moment when a copy took
 * every frame (no reader kept any back, no commit landed during it), a commit of this thread's own
 * starts the WAL over. The copies take no lock a writer needs, unlike SQLite's FULL checkpoint,
 * which copies (and syncs the file) holding the write lock; only the commit takes it, once.
 * Readers that loop over heavy reads hold a snapshot nearly all the time and commits land every
 * millisecond or so under load, so the step looks for such a moment every START_OVER_RETRY_MS for
 * `forMs`, and otherwise leaves it to the next round. Answers the last copy's counts, or the WAL's
 * once it started over.
 */
export function startOverStep(checkpointer: Checkpointer, copied: CheckpointRow, forMs = START_OVER_TRYING_MS): CheckpointRow {
  if (copied.log < START_OVER_FRAMES) return copied;
  letGo(checkpointer.snapshot);
  const until = performance.now() + forMs;
  let row = copied;
  for (let first = true; first || performance.now() < until; first = false) {
    if (!first) Atomics.wait(pause, 0, 0, START_OVER_RETRY_MS);
    row = copyWal(checkpointer.sql);
    // Busy: another connection was checkpointing (its counts are -1); short: someone else started it over.
    if (row.busy !== 0 || row.checkpointed < row.log) continue;
    if (row.log < START_OVER_FRAMES) return row;
    if (!startOver(checkpointer)) continue;
    const after = walNow(checkpointer.sql);
    if (after.log < row.log) return after;
  }
  return row;
}

/**
 * The first commit after every frame was copied starts the WAL over and syncs its header, holding
 * the write lock meanwhile: made here, right after the copy, that fsync is this thread's, and the
 * ingest thread's next unit of work waits for the lock without blocking its event loop
 * (client.ts beginImmediate) instead of blocking in the fsync. The commit writes the database's
 * user_version (which nothing else uses) with the value it has, read in the same transaction.
 * False when a writer held the lock (SQLITE_BUSY); a commit or a reader that came in the moment
 * between makes it append one page instead of starting over, which startOverStep sees and tries again.
 */
export function startOver({ sql }: Checkpointer): boolean {
  try {
    sql.exec("BEGIN IMMEDIATE");
  } catch (error) {
    if (!isSqliteBusy(error)) throw error;
    return false;
  }
  try {
    sql.pragma(`user_version = ${sql.pragma("user_version", { simple: true }) as number}`);
    sql.exec("COMMIT");
    return true;
  } finally {
    if (sql.inTransaction) sql.exec("ROLLBACK");
  }
}

/** How long a round (of 250 ms) tries to start the WAL over past START_OVER_FRAMES, once every START_OVER_RETRY_MS. */
const START_OVER_TRYING_MS = 200;
const START_OVER_RETRY_MS = 2;
/** What the checkpointer's thread sleeps on between tries (nothing ever wakes it early). */
const pause = new Int32Array(new SharedArrayBuffer(4));

/** One round on the connections openCheckpointer opened. */
export function checkpointWal(checkpointer: Checkpointer, now = Date.now): CheckpointDone {
  const started = performance.now();
  const row = startOverStep(checkpointer, copyStep(checkpointer));
  const walFrames = Math.max(0, row.log);
  return { walFrames, copied: Math.min(walFrames, Math.max(0, row.checkpointed)), busy: row.busy !== 0, ms: +(performance.now() - started).toFixed(1), at: now() };
}

/**
 * The checkpointer's work: opens `file` (which must exist: the listener's thread migrated it) and
 * runs a round every `everyMs`, telling `port` of each. An error (the disk failing) ends the
 * thread, and the listener's thread checkpoints on commit again until it restarts. Returns what
 * stops it (for tests; the thread itself runs until it is terminated).
 */
export function runCheckpointer(file: string, everyMs: number, port: { postMessage(message: CheckpointerMessage): void }): () => void {
  const checkpointer = openCheckpointer(file);
  port.postMessage({ ready: true });
  const timer = setInterval(() => port.postMessage({ checkpoint: checkpointWal(checkpointer) }), everyMs);
  return () => {
    clearInterval(timer);
    closeCheckpointer(checkpointer);
  };
}
