import type pg from "pg";
import type { BlockingWindow, LimitsView } from "@/lib/wire/types";
import {
  firstWindowKeys,
  HELD_STATUSES,
  HISTORY_POINTS,
  RESET_MATCH_MS,
  toBlockingWindow,
  toWindowView,
  type BlockedRow,
  type HistoryRow,
  type WindowRow,
} from "../records/limits";
import { pool } from "./pool";
import { at, ms, rowsOf } from "./sql";

/** The reads of lib/db/limits.ts on PostgreSQL (its writes are the write path's). */

const WINDOW_ID = `w."sourceId", w.account, w.provider, w."window"`;
/** The rule linking a window `w` to a thread `t` it blocks, as in lib/db/limits.ts (`?`: now, now, held statuses). */
const BLOCKS = `w."sourceId" = t."sourceId" AND w."resetAt" > ${at()} AND (
    (t."resetAt" > ${at()} AND t."resetAt" BETWEEN w."resetAt" - INTERVAL '${RESET_MATCH_MS} milliseconds' AND w."resetAt" + INTERVAL '${RESET_MATCH_MS} milliseconds'
      AND (t."lastErrorKind" = 'usage_limit' OR t."retryKind" = 'usage_limit' OR t.status = 'waiting_reset'))
    OR (w.status = 'rejected' AND t."externalId" = w."threadId" AND t.status = ANY(?::text[])))`;
const blocks = (now: number) => [now, now, HELD_STATUSES];

const CURRENT = `SELECT ${WINDOW_ID}, w."usedPercent", w."windowMinutes", ${ms(`w."resetAt"`)}, w.status, ${ms(`w."observedAt"`)}, w."threadId",
    w."reachedType", s.name AS "sourceName"
  FROM "LimitWindow" w JOIN "Source" s ON s.id = w."sourceId"
  ORDER BY s.name COLLATE "C", w.provider COLLATE "C", w.account COLLATE "C", w."window" COLLATE "C"`;
const HISTORY = `SELECT "observedAt", "usedPercent" FROM (SELECT ${ms(`"observedAt"`)}, "usedPercent", "observedAt" AS at FROM "LimitSnapshot"
  WHERE "sourceId" = ? AND account = ? AND provider = ? AND "window" = ? ORDER BY "observedAt" DESC LIMIT ${HISTORY_POINTS}) h ORDER BY at`;
const BLOCKED = `SELECT t.id, t."externalId", t.title, t.status FROM "LimitWindow" w JOIN "Thread" t ON ${BLOCKS}
  WHERE w."sourceId" = ? AND w.account = ? AND w.provider = ? AND w."window" = ?
  ORDER BY t."updatedAt" DESC LIMIT 50`;
const BLOCKING = `SELECT ${WINDOW_ID}, w."usedPercent", w.status, ${ms(`w."resetAt"`)}
  FROM "Thread" t JOIN "LimitWindow" w ON ${BLOCKS} WHERE t.id = ? ORDER BY w.provider COLLATE "C", w."window" COLLATE "C"`;
const BLOCKING_MANY = `SELECT t.id AS "threadKey", ${WINDOW_ID}
  FROM "Thread" t JOIN "LimitWindow" w ON ${BLOCKS} WHERE t.id = ANY(?::int[]) ORDER BY w."resetAt" DESC`;

export async function listLimitWindows(now = Date.now()): Promise<LimitsView> {
  const rows = await rowsOf<WindowRow>(CURRENT, []);
  const windows = await Promise.all(
    rows.map(async (row) => {
      const id = [row.sourceId, row.account, row.provider, row.window];
      const [blocked, history] = await Promise.all([rowsOf<BlockedRow>(BLOCKED, [...blocks(now), ...id]), rowsOf<HistoryRow>(HISTORY, id)]);
      return toWindowView(row, blocked, history, now);
    }),
  );
  return { windows, serverTime: new Date(now).toISOString() };
}

export function windowsBlocking(threadKey: number, now = Date.now()): Promise<BlockingWindow[]> {
  return windowsBlockingOn(pool(), threadKey, now);
}

/** The windows that block one thread, on `client` (the thread page reads them inside its snapshot, threads.ts) or the pool. */
export async function windowsBlockingOn(client: pg.ClientBase | pg.Pool, threadKey: number, now: number): Promise<BlockingWindow[]> {
  return (await rowsOf<Parameters<typeof toBlockingWindow>[0]>(BLOCKING, [...blocks(now), threadKey], client)).map(toBlockingWindow);
}

/** For each of the given threads waiting on a usage window, that window's key (on the board's snapshot). */
export async function blockingWindowKeys(client: pg.ClientBase, threadKeys: number[], now = Date.now()): Promise<Map<number, string>> {
  if (threadKeys.length === 0) return new Map();
  return firstWindowKeys(await rowsOf(BLOCKING_MANY, [...blocks(now), threadKeys], client));
}
