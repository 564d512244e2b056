import { createHash } from "node:crypto";
import type { LimitSnapshot } from "@/lib/ingest/limit-snapshots";
import { THREAD_STATUSES } from "@/lib/retry/types";
import { isStoppable } from "@/lib/threads/statuses";
import type { BlockingWindow, LimitsView, LimitWindowView } from "@/lib/wire/types";
import { serialized } from "./client";
import { limitRow } from "./records/limits";
import * as postgres from "./postgres/limits";
import { isoOrNull, statement, type Sql } from "./statement";
import { onEitherStore } from "./store";

/**
 * Usage windows: every limit snapshot a source reported (history for the sparklines, pruned with
 * the events) and the latest one per (source, account, provider, window), which is a row of the
 * Limits page and of GET /api/v1/limits.
 */

/** A snapshot older than this no longer says how full its window is now: shown greyed. */
export const LIMIT_STALE_MS = 15 * 60_000;

/**
 * A thread whose reset lies this close to a window's reset waits on that window: reset times
 * reach threads through texts with minute precision ("try again at 9:29 AM").
 */
export const RESET_MATCH_MS = 90_000;

/** Points per window in the history sparkline. */
const HISTORY_POINTS = 48;

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
 * Statuses of a thread a full window holds up: waiting for the reset, or ended on the refusal
 * (Claude Code answers a usage limit with a failed turn, no retry).
 */
const HELD_STATUSES = THREAD_STATUSES.filter((s) => s === "waiting_reset" || (!isStoppable(s) && s !== "completed" && s !== "idle"));

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
const PRUNE = `DELETE FROM "LimitSnapshot" WHERE id IN (SELECT id FROM "LimitSnapshot" WHERE observedAt < ? ORDER BY observedAt LIMIT ?)`;

interface WindowRow {
  sourceId: string;
  sourceName: string;
  account: string;
  provider: string;
  window: string;
  usedPercent: number | null;
  windowMinutes: number | null;
  resetAt: number | null;
  status: string;
  observedAt: number;
  threadId: string | null;
  reachedType: string | null;
}

/** The store statements of a unit of work (see unit-of-work.ts): snapshots commit with their lines. */
export const limitRows = {
  saveLimitSnapshots(sourceId: string, snapshots: LimitSnapshot[]): void {
    for (const s of snapshots) {
      const row = limitRow(sourceId, s);
      statement(INSERT).run(row);
      statement(UPSERT_CURRENT).run(row);
    }
  },
};

/** A window's stable anchor on the Limits page (`/limits#limit-<key>`). */
export function limitWindowKey(sourceId: string, account: string | null, provider: string, window: string): string {
  return createHash("sha256").update(JSON.stringify([sourceId, account ?? "", provider, window])).digest("hex").slice(0, 12);
}

const HELD = JSON.stringify(HELD_STATUSES);
const windowOf = (row: { sourceId: string; account: string; provider: string; window: string }) => ({
  sourceId: row.sourceId,
  account: row.account,
  provider: row.provider,
  window: row.window,
});


function toView(row: WindowRow, now: number): LimitWindowView {
  const blocked = statement(BLOCKED).all({ ...windowOf(row), now, held: HELD }) as { id: number; externalId: string; title: string | null; status: string }[];
  const history = statement(HISTORY).all(row.sourceId, row.account, row.provider, row.window) as { observedAt: number; usedPercent: number | null }[];
  return {
    key: limitWindowKey(row.sourceId, row.account, row.provider, row.window),
    source: row.sourceName,
    sourceId: row.sourceId,
    account: row.account || null,
    provider: row.provider,
    window: row.window,
    usedPercent: row.usedPercent,
    windowMinutes: row.windowMinutes,
    resetAt: isoOrNull(row.resetAt),
    status: row.status,
    reachedType: row.reachedType,
    observedAt: isoOrNull(row.observedAt)!,
    // Old news, or the window has reset since: its fill no longer holds.
    stale: now - row.observedAt > LIMIT_STALE_MS || (row.resetAt !== null && row.resetAt <= now),
    threadId: row.threadId,
    blockedThreads: blocked.map((t) => ({ key: t.id, id: t.externalId, title: t.title, status: t.status })),
    history: history.map((h) => ({ at: isoOrNull(h.observedAt)!, usedPercent: h.usedPercent })),
  };
}

/** The current row of every window, with the threads blocked by it and its recent history. */
export function listLimitWindows(now = Date.now()): Promise<LimitsView> {
  return serialized(() => {
    const rows = statement(CURRENT).all() as WindowRow[];
    return { windows: rows.map((row) => toView(row, now)), serverTime: new Date(now).toISOString() };
  });
}

/** The windows that block one thread (its page links to their rows). */
export function windowsBlocking(threadKey: number, now = Date.now()): Promise<BlockingWindow[]> {
  return serialized(() =>
    (statement(BLOCKING).all({ threadKey, now, held: HELD }) as (Parameters<typeof windowOf>[0] & { usedPercent: number | null; status: string; resetAt: number })[]).map((w) => ({
      key: limitWindowKey(w.sourceId, w.account, w.provider, w.window),
      provider: w.provider,
      window: w.window,
      usedPercent: w.usedPercent,
      status: w.status,
      resetAt: isoOrNull(w.resetAt)!,
    })),
  );
}

/**
 * For each of the given threads waiting on a usage window, that window's key (the board links its
 * row; the latest reset wins). Synchronous on the caller's connection: the board reads it inside
 * its own read transaction (lib/db/threads.ts).
 */
export function blockingWindowKeys(sql: Sql, threadKeys: number[], now = Date.now()): Map<number, string> {
  const keys = new Map<number, string>();
  if (threadKeys.length === 0) return keys;
  const rows = statement(BLOCKING_MANY, sql).all({ keys: JSON.stringify(threadKeys), now, held: HELD }) as (Parameters<typeof windowOf>[0] & { threadKey: number })[];
  for (const row of rows) if (!keys.has(row.threadKey)) keys.set(row.threadKey, limitWindowKey(row.sourceId, row.account, row.provider, row.window));
  return keys;
}

/** Deletes up to `limit` snapshots observed before `cutoff`; the current rows stay. Returns how many. */
function pruneSnapshots(cutoff: number, limit: number): Promise<number> {
  return serialized(() => statement(PRUNE).run(cutoff, limit).changes);
}

export const { pruneLimitSnapshots } = onEitherStore({ pruneLimitSnapshots: pruneSnapshots }, postgres);
