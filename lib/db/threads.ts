import type { Prisma } from "./generated/client";
import { ATTENTION_STATUSES, STOPPABLE_STATUSES } from "@/lib/threads/statuses";
import { EVENT_PAGE_SIZE, type FilterOptions, type ThreadBoard, type ThreadDetail, type ThreadPage, type ThreadView } from "@/lib/wire/types";
import { committedRead, db } from "./client";
import * as postgres from "./postgres/threads";
import {
  countOf,
  pageSlices,
  threadInclude,
  toThreadDetail,
  viewsOf,
  withOtherPaths as withPaths,
  type AttemptRow,
  type DetailRow,
  type DetailRows,
  type DirectiveHistoryRow,
  type EpisodeRow,
  type OtherPathRow,
  type PageOptions,
  type SqlViewRow,
} from "./records/threads";
import { onEitherStore } from "./store";
import { eventPageOn } from "./events";
import { blockingWindowKeys, windowsBlockingOn } from "./limits";
import { pluck, statement, type Sql } from "./statement";
import { threadFilterSql, threadWhere, viewStatusSql, type Clause, type ThreadFilter } from "./thread-filter";

/**
 * The read side for threads: the board, the threads API and the thread page read through here.
 * Statuses are stored as the engine last derived them; `stalled` is derived at read time
 * (thread-filter.ts).
 */



/**
 * The board's reads (its page, counts and row refetches) are SQL on a read-only connection, each
 * synchronous inside one read transaction: Prisma's client awaits between its queries, and under
 * ingestion every await waited behind the batches queued meanwhile, so a page of a few queries
 * took ten times its own cost. VIEW_COLUMNS are what toThreadView needs, thread alias `t`.
 */
const VIEW_COLUMNS = `t.id, t.externalId, t.title, t.agent, t.provider, t.model, t.sourceId, t.parentExternalId, t.status,
    t.turnId, t.retryKind, t.retryAttempt, t.retryMaxAttempts, t.nextAttemptAt, t.nextAttemptEstimated, t.deadlineAt, t.resetAt,
    t.advisedDelayMs, t.policy, t.lastErrorKind, t.lastErrorHttpStatus, t.lastErrorCode, t.lastErrorMessage, t.wakeAt,
    t.updatedAt, t.lastEventAt, t.archivedAt, t.snoozedUntil,
    s.name AS sourceName, s.capabilities AS sourceCapabilities, s.lastPolledAt AS sourceLastPolledAt, s.lastOtlpAt AS sourceLastOtlpAt`;
/**
 * Threads by a JSON array of keys (`?`). The CROSS JOIN makes SQLite start from the keys: it
 * cannot tell how few they are and otherwise may walk every thread for them.
 */
const byKeys = (column: "id" | "joinedTo") =>
  `FROM (SELECT DISTINCT value FROM json_each(?)) k CROSS JOIN "Thread" t ON t.${column} = k.value JOIN "Source" s ON s.id = t.sourceId`;
const NEWEST_FIRST = `ORDER BY t.updatedAt DESC, t.id DESC`;
const ATTENTION_SQL = `t.status IN (${ATTENTION_STATUSES.map((status) => `'${status}'`).join(", ")})`;
const OTHER_PATHS = `SELECT t.id AS key, t.joinedTo, t.sourceId, s.name AS source ${byKeys("joinedTo")} ORDER BY t.id`;

/** The rows of `keys`, in that order. */
function rowsInOrder(sql: Sql, keys: number[], now: number): ThreadView[] {
  if (keys.length === 0) return [];
  const rows = statement(`SELECT ${VIEW_COLUMNS} ${byKeys("id")}`, sql).all(JSON.stringify(keys)) as SqlViewRow[];
  const byKey = new Map(rows.map((row) => [row.id, row]));
  return viewsOf(keys.flatMap((key) => byKey.get(key) ?? []), now);
}

/** The filter as SQL on alias `t`, its updatedAt range included. */
function boardClause(filter: ThreadFilter, now: number): Clause {
  const clause = threadFilterSql(filter, now);
  const where = [clause.sql];
  const params = [...clause.params];
  if (filter.from !== undefined) {
    where.push("t.updatedAt >= ?");
    params.push(filter.from);
  }
  if (filter.to !== undefined) {
    where.push("t.updatedAt <= ?");
    params.push(filter.to);
  }
  return { sql: where.join(" AND "), params };
}

/**
 * Adds what the board shows beside each row: the other paths that report it (the threads joined
 * to it, lib/db/thread-join.ts) and the usage window it waits on.
 */
function withSurroundings(sql: Sql, views: ThreadView[], now: number): ThreadView[] {
  if (views.length === 0) return views;
  const limitKeys = blockingWindowKeys(sql, views.filter((view) => view.resetAt !== null).map((view) => view.key), now);
  return withOtherPaths(sql, views).map((view) => ({ ...view, limitKey: limitKeys.get(view.key) ?? null }));
}

/** Names the other paths that report each thread: the threads joined to it (lib/db/thread-join.ts). */
function withOtherPaths(sql: Sql, views: ThreadView[]): ThreadView[] {
  return withPaths(views, statement(OTHER_PATHS, sql).all(JSON.stringify(views.map((view) => view.key))) as OtherPathRow[]);
}

/**
 * One page, newest first (records/threads.ts pageSlices). The totals come from the status counts
 * (readStatusCounts), which already hold them.
 */
function readPage(sql: Sql, filter: ThreadFilter, totals: { total: number; attention: number }, options: PageOptions, now: number): ThreadPage {
  const { page, pageSize, slices } = pageSlices(options, totals);
  const where = boardClause(filter, now);
  // The page's keys first, from the board index alone where the filter allows (a thread row is
  // large: it holds the engine's state), then those rows.
  const keys = slices.flatMap(({ part, take, offset }) => {
    const only = part === null ? "" : ` AND ${part === "attention" ? "" : "NOT "}${ATTENTION_SQL}`;
    return pluck(`SELECT t.id FROM "Thread" t WHERE ${where.sql}${only} ${NEWEST_FIRST} LIMIT ? OFFSET ?`, sql).all(...where.params, take, offset) as number[];
  });
  return { threads: rowsInOrder(sql, keys, now), total: totals.total, page, pageSize };
}

/**
 * Threads per status as readers show it (stalled derived), in one grouped query: the board
 * header's counts, and from them the page's totals and what Stop all matching would stop.
 */
function readStatusCounts(sql: Sql, filter: Omit<ThreadFilter, "status">, now: number): Record<string, number> {
  const where = boardClause(filter, now);
  const rows = statement(`SELECT ${viewStatusSql("t")} AS status, count(*) AS n FROM "Thread" t WHERE ${where.sql} GROUP BY 1`, sql).all(now, ...where.params) as {
    status: string;
    n: number;
  }[];
  const counts: Record<string, number> = {};
  for (const row of rows) counts[row.status] = row.n;
  return counts;
}

/** A read of the board's, whole, on the read-only connection: one snapshot, no await inside. */
function boardRead<T>(read: (sql: Sql) => T): Promise<T> {
  return committedRead((sql) => sql.transaction(() => read(sql))());
}

/**
 * The current rows of the given threads (the live board's row refetch); unknown keys are left
 * out, and so are those `filter` (when given) does not match: a board that asks with its own
 * filter learns which changed threads it still shows.
 */
function threadRowsOnSqlite(keys: number[], now = Date.now(), filter?: ThreadFilter): Promise<ThreadView[]> {
  if (keys.length === 0) return Promise.resolve([]);
  return boardRead((sql) => {
    const where = filter ? boardClause(filter, now) : { sql: "1", params: [] };
    const rows = statement(`SELECT ${VIEW_COLUMNS} ${byKeys("id")} WHERE ${where.sql} ORDER BY t.id`, sql).all(JSON.stringify(keys), ...where.params) as SqlViewRow[];
    return withSurroundings(sql, viewsOf(rows, now), now);
  });
}

const DISTINCT = (column: "provider" | "model") => `SELECT DISTINCT ${column} FROM "Thread" WHERE ${column} IS NOT NULL AND ${column} != '' ORDER BY ${column}`;

/**
 * Distinct values for the filter menus, in byte order, on one read connection: synchronous, so
 * the read worker (reads.ts) runs it whole beside the board it goes with.
 */
export function readFilterOptions(sql: Sql = db().sql): FilterOptions {
  return {
    providers: pluck(DISTINCT("provider"), sql).all() as string[],
    models: pluck(DISTINCT("model"), sql).all() as string[],
    sources: statement(`SELECT id, name FROM "Source" ORDER BY name`, sql).all() as { id: string; name: string }[],
  };
}

function filterOptionsOnSqlite(): Promise<FilterOptions> {
  return committedRead((sql) => readFilterOptions(sql));
}

/** All threads with this agent id (one per source that reported it). */
async function threadsByExternalIdOnSqlite(externalId: string, sourceId?: string | null) {
  return db().prisma.thread.findMany({
    where: { externalId, ...(sourceId ? { sourceId } : {}) },
    include: threadInclude,
    orderBy: { updatedAt: "desc" },
  });
}

/** The filter narrowed to stoppable threads, or null when it cannot match any. */
function stoppableWhere(filter: ThreadFilter, now: number): Prisma.ThreadWhereInput | null {
  const status = filter.status?.length ? filter.status.filter((s) => STOPPABLE_STATUSES.includes(s)) : STOPPABLE_STATUSES;
  return status.length ? threadWhere({ ...filter, status }, now) : null;
}

/** Internal ids of the stoppable threads matching a filter ("Stop all N matching"). */
async function stoppableThreadKeysOnSqlite(filter: ThreadFilter, now = Date.now()): Promise<number[]> {
  const where = stoppableWhere(filter, now);
  if (!where) return [];
  const rows = await db().prisma.thread.findMany({ where, select: { id: true } });
  return rows.map((row) => row.id);
}

async function threadExistsOnSqlite(key: number): Promise<boolean> {
  return (await db().prisma.thread.count({ where: { id: key } })) > 0;
}

/** The thread page's own statements; the event page and the windows are those of events.ts and limits.ts. */
const WITH_SOURCE = `FROM "Thread" t JOIN "Source" s ON s.id = t.sourceId`;
const DETAIL = {
  thread: `SELECT ${VIEW_COLUMNS}, t.state, t.joinedTo ${WITH_SOURCE} WHERE t.id = ?`,
  byExternalId: `SELECT ${VIEW_COLUMNS} ${WITH_SOURCE} WHERE t.sourceId = ? AND t.externalId = ?`,
  children: `SELECT ${VIEW_COLUMNS} ${WITH_SOURCE} WHERE t.sourceId = ? AND t.parentExternalId = ? ORDER BY t.createdAt, t.id`,
  episodes: `SELECT id, seq, turnId, kind, policy, maxAttempts, startedAt, endedAt, outcome, outcomeCode, outcomeReason, resetAt,
    attemptsMade, reportedRetryMs FROM "Episode" WHERE threadId = ? ORDER BY seq`,
  attempts: `SELECT a.episodeId, a.n, a.noticeAt, a.advisedDelayMs, a.expectedAt, a.estimated, a.deadlineAt, a.startedAt, a.earlyByMs,
    a.httpStatus, a.code, a.message FROM "Episode" e JOIN "Attempt" a ON a.episodeId = e.id WHERE e.threadId = ? ORDER BY e.seq, a.n`,
  directives: `SELECT id, kind, origin, reason, state, turnId, createdAt, deliveredAt, acknowledgedAt, result, detail
    FROM "Directive" WHERE threadId = ? ORDER BY createdAt, id`,
};

/**
 * One thread for its page: projection, lineage, episodes, directives and the newest page of
 * events without raw payloads (earlier events and payloads are fetched on demand), so the answer
 * does not grow with the thread's event count. One read transaction: a watchdog pass that
 * commits meanwhile is seen whole or not at all, so the status never disagrees with the episodes.
 */
function threadDetailOnSqlite(key: number, now = Date.now()): Promise<ThreadDetail | null> {
  return boardRead((sql) => {
    const thread = statement(DETAIL.thread, sql).get(key) as DetailRow | undefined;
    if (!thread) return null;
    const one = (text: string, ...params: unknown[]) => (statement(text, sql).get(...params) as SqlViewRow | undefined) ?? null;
    const otherPaths = statement(OTHER_PATHS, sql).all(JSON.stringify([key])) as OtherPathRow[];
    const page = (threadKey: number) => eventPageOn(sql, threadKey, { limit: EVENT_PAGE_SIZE });
    const rows: DetailRows = {
      thread,
      otherPaths,
      parent: thread.parentExternalId === null ? null : one(DETAIL.byExternalId, thread.sourceId, thread.parentExternalId),
      children: statement(DETAIL.children, sql).all(thread.sourceId, thread.externalId) as SqlViewRow[],
      joinedTo: thread.joinedTo === null ? null : one(DETAIL.thread, thread.joinedTo),
      episodes: statement(DETAIL.episodes, sql).all(key) as EpisodeRow[],
      attempts: statement(DETAIL.attempts, sql).all(key) as AttemptRow[],
      directives: statement(DETAIL.directives, sql).all(key) as DirectiveHistoryRow[],
      events: page(key),
      joinedEvents: otherPaths.map((other) => page(other.key)),
      limits: windowsBlockingOn(sql, key, now),
    };
    return toThreadDetail(rows, now);
  });
}

/**
 * Everything the board and GET /api/v1/threads show for one filter. Synchronous, so the read
 * worker (reads.ts) runs it whole; the caller holds one read transaction around it.
 */
export function readBoard(filter: ThreadFilter, options: PageOptions = {}, now = Date.now(), sql: Sql = db().sql): ThreadBoard {
  const { status, ...withoutStatus } = filter;
  const counts = readStatusCounts(sql, withoutStatus, now);
  const totals = { total: countOf(counts, status), attention: countOf(counts, status, ATTENTION_STATUSES) };
  const page = readPage(sql, filter, totals, options, now);
  return { ...page, threads: withSurroundings(sql, page.threads, now), counts, stoppable: countOf(counts, status, STOPPABLE_STATUSES), serverTime: new Date(now).toISOString() };
}

function threadBoardOnSqlite(filter: ThreadFilter, options: PageOptions = {}, now = Date.now()): Promise<ThreadBoard> {
  return boardRead((sql) => readBoard(filter, options, now, sql));
}

export const { threadRows, filterOptions, threadsByExternalId, stoppableThreadKeys, threadExists, threadDetail, threadBoard } = onEitherStore(
  {
    threadRows: threadRowsOnSqlite,
    filterOptions: filterOptionsOnSqlite,
    threadsByExternalId: threadsByExternalIdOnSqlite,
    stoppableThreadKeys: stoppableThreadKeysOnSqlite,
    threadExists: threadExistsOnSqlite,
    threadDetail: threadDetailOnSqlite,
    threadBoard: threadBoardOnSqlite,
  },
  postgres,
);
