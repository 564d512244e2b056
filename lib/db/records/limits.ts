import { createHash } from "node:crypto";
import type { LimitSnapshot } from "@/lib/ingest/limit-snapshots";
import { THREAD_STATUSES } from "@/lib/retry/types";
import { isStoppable } from "@/lib/threads/statuses";
import type { BlockingWindow, LimitWindowView } from "@/lib/wire/types";

/** A limit snapshot as both stores write it (lib/db/limits.ts, lib/db/postgres/limits.ts). */
export function limitRow(sourceId: string, s: LimitSnapshot) {
  return {
    sourceId,
    account: s.account ?? "",
    provider: s.provider,
    window: s.window,
    usedPercent: s.usedPercent,
    windowMinutes: s.windowMinutes === null ? null : Math.round(s.windowMinutes),
    resetAt: s.resetAt,
    status: s.status,
    observedAt: s.observedAt,
    threadId: s.threadId,
    reachedType: s.reachedType ?? null,
  };
}

/** A snapshot older than this no longer says how full its window is now: shown greyed. */
export const LIMIT_STALE_MS = 15 * 60_000;

/**
 * A thread whose reset lies this close to a window's reset waits on that window: reset times
 * reach threads through texts with minute precision ("try again at 9:29 AM").
 */
export const RESET_MATCH_MS = 90_000;

/** Points per window in the history sparkline. */
export const HISTORY_POINTS = 48;

/**
 * Statuses of a thread a full window holds up: waiting for the reset, or ended on the refusal
 * (Claude Code answers a usage limit with a failed turn, no retry).
 */
export const HELD_STATUSES = THREAD_STATUSES.filter((s) => s === "waiting_reset" || (!isStoppable(s) && s !== "completed" && s !== "idle"));

/** A window's stable anchor on the Limits page (`/limits#limit-<key>`). */
export function limitWindowKey(sourceId: string, account: string | null, provider: string, window: string): string {
  return createHash("sha256").update(JSON.stringify([sourceId, account ?? "", provider, window])).digest("hex").slice(0, 12);
}

/** One window's identity. */
export interface WindowId {
  sourceId: string;
  account: string;
  provider: string;
  window: string;
}

export const windowOf = (row: WindowId): WindowId => ({ sourceId: row.sourceId, account: row.account, provider: row.provider, window: row.window });

/** A current window row, times in epoch ms. */
export interface WindowRow extends WindowId {
  sourceName: string;
  usedPercent: number | null;
  windowMinutes: number | null;
  resetAt: number | null;
  status: string;
  observedAt: number;
  threadId: string | null;
  reachedType: string | null;
}

export interface BlockedRow {
  id: number;
  externalId: string;
  title: string | null;
  status: string;
}

export interface HistoryRow {
  observedAt: number;
  usedPercent: number | null;
}

const isoOrNull = (ms: number | null) => (ms == null ? null : new Date(ms).toISOString());

export function toWindowView(row: WindowRow, blocked: BlockedRow[], history: HistoryRow[], now: number): LimitWindowView {
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

export function toBlockingWindow(w: WindowId & { usedPercent: number | null; status: string; resetAt: number }): BlockingWindow {
  return {
    key: limitWindowKey(w.sourceId, w.account, w.provider, w.window),
    provider: w.provider,
    window: w.window,
    usedPercent: w.usedPercent,
    status: w.status,
    resetAt: isoOrNull(w.resetAt)!,
  };
}

/** For each thread, the key of the first window listed for it (rows come latest reset first). */
export function firstWindowKeys(rows: (WindowId & { threadKey: number })[]): Map<number, string> {
  const keys = new Map<number, string>();
  for (const row of rows) if (!keys.has(row.threadKey)) keys.set(row.threadKey, limitWindowKey(row.sourceId, row.account, row.provider, row.window));
  return keys;
}
