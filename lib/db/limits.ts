import type { LimitSnapshot } from "@/lib/ingest/limit-snapshots";
import type { BlockingWindow, LimitsView } from "@/lib/wire/types";
import { committedRead, db, serialized } from "./client";
import * as postgresReads from "./postgres/limits-read";
import * as postgres from "./postgres/limits";
import {
  firstWindowKeys,
  limitRow,
  HELD_STATUSES,
  HISTORY_POINTS,
  RESET_MATCH_MS,
  toBlockingWindow,
  toWindowView,
  windowOf,
  type BlockedRow,
  type HistoryRow,
  type WindowRow,
} from "./records/limits";
import { statement, type Sql } from "./statement";
import { onEitherStore } from "./store";

export { LIMIT_STALE_MS, limitWindowKey, RESET_MATCH_MS } from "./records/limits";

/**
 * Usage windows: every limit snapshot a source reported (history for the sparklines, pruned with
 * the events) and the latest one per (source, account, provider, window), which is a row of the
 * Limits page and of GET /api/v1/limits.
 */

const INSERT = `INSERT INTO "LimitSnapshot" (sourceId, account, provider, window, usedPercent, windowMinutes, resetAt, status, observedAt, threadId, reachedType)
  VALUES (@sourceId, @account, @provider, @window, @usedPercent, @windowMinutes, @resetAt, @status, @observedAt, @threadId, @reachedType)`;
// A snapshot that arrives late (an import, a relay catching up) adds history but never replaces a newer current row.
const UPSERT_CURRENT = `INSERT INTO "LimitWindow" (sourceId, account, provider, window, usedPercent, windowMinutes, resetAt, status, observedAt, threadId, reachedType)
  VALUES (@sourceId, @account, @provider, @window, @usedPercent, @windowMinutes, @resetAt, @status, @observedAt, @threadId, @reachedType)
  ON CONFLICT (sourceId, account, provider, window) DO UPDATE SET usedPercent = excluded.usedPercent, windowMinutes = excluded.windowMinutes,
    resetAt = excluded.resetAt, status = excluded.status, observedAt = excluded.observedAt, threadId = excluded.threadId, reachedType = excluded.reachedType
  WHERE excluded.observedAt >= "LimitWindow".observedAt`;
const CURRENT = `SELECT w.*, s.name AS sourceName FROM "LimitWindow" w JOIN "Source" s ON s.id = w.sourceId
  ORDER BY s.name, w.provider, w.account, w.window`;
const HISTORY = `SELECT observedAt, usedPercent FROM (SELECT observedAt, usedPercent FROM "LimitSnapshot"
  WHERE sourceId = ? AND account = ? AND provider = ? AND window = ? ORDER BY observedAt DESC LIMIT ${HISTORY_POINTS}) ORDER BY observedAt`;
/**
 * The one rule linking a window `w` to a thread `t` it blocks: a thread of the window's source
 * waiting on a usage limit whose reset is the window's, and, while the window refuses, the held
 * thread the refusal came with. Only while the window has not reset yet.
 */
const BLOCKS = `w.sourceId = t.sourceId AND w.resetAt > @now AND (
    (t.resetAt > @now AND abs(t.resetAt - w.resetAt) <= ${RESET_MATCH_MS}
      AND (t.lastErrorKind = 'usage_limit' OR t.retryKind = 'usage_limit' OR t.status = 'waiting_reset'))
    OR (w.status = 'rejected' AND t.externalId = w.threadId AND t.status IN (SELECT value FROM json_each(@held))))`;
const BLOCKED = `SELECT t.id, t.externalId, t.title, t.status FROM "LimitWindow" w JOIN "Thread" t ON ${BLOCKS}
  WHERE w.sourceId = @sourceId AND w.account = @account AND w.provider = @provider AND w.window = @window
  ORDER BY t.updatedAt DESC LIMIT 50`;
const BLOCKING = `SELECT w.sourceId, w.account, w.provider, w.window, w.usedPercent, w.status, w.resetAt
  FROM "Thread" t JOIN "LimitWindow" w ON ${BLOCKS} WHERE t.id = @threadKey ORDER BY w.provider, w.window`;
const BLOCKING_MANY = `SELECT t.id AS threadKey, w.sourceId, w.account, w.provider, w.window
  FROM "Thread" t JOIN "LimitWindow" w ON ${BLOCKS} WHERE t.id IN (SELECT value FROM json_each(@keys)) ORDER BY w.resetAt DESC`;
// The reset a window of the source (of the thread's provider, when known) reported within [from, to]:
// the thread's own window first, else the latest (minuteOnlyResetRange in lib/retry/advice.ts says why).
const RESET_BETWEEN = `SELECT resetAt FROM "LimitWindow" WHERE sourceId = @sourceId AND resetAt BETWEEN @from AND @to
  AND (@provider IS NULL OR provider = @provider) ORDER BY coalesce(threadId = @threadId, 0) DESC, resetAt DESC LIMIT 1`;
const PRUNE = `DELETE FROM "LimitSnapshot" WHERE id IN (SELECT id FROM "LimitSnapshot" WHERE observedAt < ? ORDER BY observedAt LIMIT ?)`;

/** The store statements of a unit of work (see unit-of-work.ts): snapshots commit with their lines. */
export const limitRows = {
  saveLimitSnapshots(sourceId: string, snapshots: LimitSnapshot[]): void {
    for (const s of snapshots) {
      const row = limitRow(sourceId, s);
      statement(INSERT).run(row);
      statement(UPSERT_CURRENT).run(row);
    }
  },

  /** The reset a usage window of the source reported within [from, to] for this thread (see RESET_BETWEEN), or null. */
  windowResetBetween(sourceId: string, thread: { externalId: string; provider: string | null }, from: number, to: number): number | null {
    const row = statement(RESET_BETWEEN).get({ sourceId, provider: thread.provider, threadId: thread.externalId, from, to }) as { resetAt: number } | undefined;
    return row?.resetAt ?? null;
  },
};

const HELD = JSON.stringify(HELD_STATUSES);

function toView(sql: Sql, row: WindowRow, now: number) {
  const blocked = statement(BLOCKED, sql).all({ ...windowOf(row), now, held: HELD }) as BlockedRow[];
  const history = statement(HISTORY, sql).all(row.sourceId, row.account, row.provider, row.window) as HistoryRow[];
  return toWindowView(row, blocked, history, now);
}

/**
 * The current row of every window, with the threads blocked by it and its recent history, in the
 * caller's snapshot on `sql`: a read by name (reads.ts), so the listener's thread leaves it to the
 * read worker. Each window's blocked threads are sought among all its source's threads: 13–15 ms
 * for 6 windows over 10,000 threads half held by a usage limit (in process, on the bench's
 * 1M-event database).
 */
export function readLimitWindows(now = Date.now(), sql: Sql = db().sql): LimitsView {
  const rows = statement(CURRENT, sql).all() as WindowRow[];
  return { windows: rows.map((row) => toView(sql, row, now)), serverTime: new Date(now).toISOString() };
}

const sqlite = {
  /** readLimitWindows as committed, in one snapshot: it never waits behind ingestion. */
  listLimitWindows(now = Date.now()): Promise<LimitsView> {
    return committedRead((sql) => sql.transaction(() => readLimitWindows(now, sql))());
  },

  /** The windows that block one thread (its page links to their rows), as committed. */
  windowsBlocking(threadKey: number, now = Date.now()): Promise<BlockingWindow[]> {
    return committedRead((sql) => windowsBlockingOn(sql, threadKey, now));
  },
};

/** The windows that block one thread, synchronous on `sql`: the thread page reads them inside its own snapshot (lib/db/threads.ts). */
export function windowsBlockingOn(sql: Sql, threadKey: number, now: number): BlockingWindow[] {
  return (statement(BLOCKING, sql).all({ threadKey, now, held: HELD }) as Parameters<typeof toBlockingWindow>[0][]).map(toBlockingWindow);
}

export const { listLimitWindows, windowsBlocking } = onEitherStore(sqlite, postgresReads);

/**
 * For each of the given threads waiting on a usage window, that window's key (the board links its
 * row; the latest reset wins). Synchronous on the caller's connection: the board reads it inside
 * its own read transaction (lib/db/threads.ts).
 */
export function blockingWindowKeys(sql: Sql, threadKeys: number[], now = Date.now()): Map<number, string> {
  if (threadKeys.length === 0) return new Map();
  return firstWindowKeys(statement(BLOCKING_MANY, sql).all({ keys: JSON.stringify(threadKeys), now, held: HELD }) as Parameters<typeof firstWindowKeys>[0]);
}

/** Deletes up to `limit` snapshots observed before `cutoff`; the current rows stay. Returns how many. */
function pruneSnapshots(cutoff: number, limit: number): Promise<number> {
  return serialized(() => statement(PRUNE).run(cutoff, limit).changes);
}

export const { pruneLimitSnapshots } = onEitherStore({ pruneLimitSnapshots: pruneSnapshots }, postgres);
