import type pg from "pg";
import { ATTENTION_STATUSES, STOPPABLE_STATUSES } from "@/lib/threads/statuses";
import { EVENT_PAGE_SIZE, type EventPage, type FilterOptions, type ThreadBoard, type ThreadDetail, type ThreadView } from "@/lib/wire/types";
import type { Clause, ThreadFilter } from "../thread-filter";
import {
  countOf,
  pageSlices,
  threadInclude,
  toThreadDetail,
  viewsOf,
  withOtherPaths,
  type AttemptRow,
  type DetailRow,
  type DetailRows,
  type DirectiveHistoryRow,
  type EpisodeRow,
  type OtherPathRow,
  type PageOptions,
  type SqlViewRow,
} from "../records/threads";
import { postgresPrisma } from "./client";
import { blockingWindowKeys, windowsBlockingOn } from "./limits-read";
import { eventPageOn } from "./thread-events";
import { at, ms, rowsOf, snapshotRead } from "./sql";
import { threadFilterSql, viewStatusSql } from "./thread-filter";

/**
 * lib/db/threads.ts on PostgreSQL: the board's reads are plain queries on the pool, those of one
 * board answer, and a thread's page, in one REPEATABLE READ snapshot (sql.ts). Rows are selected
 * in SQLite's shape (times in epoch ms) so records/threads.ts maps both.
 */

const VIEW_COLUMNS = `t.id, t."externalId", t.title, t.agent, t.provider, t.model, t."sourceId", t."parentExternalId", t.status,
    t."turnId", t."retryKind", t."retryAttempt", t."retryMaxAttempts", ${ms(`t."nextAttemptAt"`)}, t."nextAttemptEstimated", ${ms(`t."deadlineAt"`)},
    ${ms(`t."resetAt"`)}, t."advisedDelayMs", t.policy, t."lastErrorKind", t."lastErrorHttpStatus", t."lastErrorCode", t."lastErrorMessage",
    ${ms(`t."wakeAt"`)}, ${ms(`t."updatedAt"`)}, ${ms(`t."lastEventAt"`)}, ${ms(`t."archivedAt"`)}, ${ms(`t."snoozedUntil"`)},
    s.name AS "sourceName", s.capabilities AS "sourceCapabilities", ${ms(`s."lastPolledAt"`, "sourceLastPolledAt")}, ${ms(`s."lastOtlpAt"`, "sourceLastOtlpAt")}`;
const BY_KEYS = `FROM "Thread" t JOIN "Source" s ON s.id = t."sourceId" WHERE t.id = ANY(?::int[])`;
const BY_PAGE = `JOIN "Thread" t ON t.id = k.id JOIN "Source" s ON s.id = t."sourceId"`;
const NEWEST_FIRST = `ORDER BY t."updatedAt" DESC, t.id DESC`;
const ATTENTION_SQL = `t.status IN (${ATTENTION_STATUSES.map((status) => `'${status}'`).join(", ")})`;
const OTHER_PATHS = `SELECT t.id AS key, t."joinedTo", t."sourceId", s.name AS source
  FROM "Thread" t JOIN "Source" s ON s.id = t."sourceId" WHERE t."joinedTo" = ANY(?::int[]) ORDER BY t.id`;

type Db = pg.ClientBase;

/** The filter as SQL on alias `t`, its updatedAt range included. */
function boardClause(filter: ThreadFilter, now: number): Clause {
  const clause = threadFilterSql(filter, now);
  const where = [clause.sql];
  const params = [...clause.params];
  if (filter.from !== undefined) {
    where.push(`t."updatedAt" >= ${at()}`);
    params.push(filter.from);
  }
  if (filter.to !== undefined) {
    where.push(`t."updatedAt" <= ${at()}`);
    params.push(filter.to);
  }
  return { sql: where.join(" AND "), params };
}

async function otherPaths(db: Db | pg.Pool, views: ThreadView[]): Promise<ThreadView[]> {
  return withOtherPaths(views, await rowsOf<OtherPathRow>(OTHER_PATHS, [views.map((view) => view.key)], db));
}

async function withSurroundings(db: Db, views: ThreadView[], now: number): Promise<ThreadView[]> {
  if (views.length === 0) return views;
  const limitKeys = await blockingWindowKeys(db, views.filter((view) => view.resetAt !== null).map((view) => view.key), now);
  return (await otherPaths(db, views)).map((view) => ({ ...view, limitKey: limitKeys.get(view.key) ?? null }));
}

async function readStatusCounts(db: Db, filter: Omit<ThreadFilter, "status">, now: number): Promise<Record<string, number>> {
  const where = boardClause(filter, now);
  const rows = await rowsOf<{ status: string; n: number }>(
    `SELECT ${viewStatusSql("t")} AS status, count(*) AS n FROM "Thread" t WHERE ${where.sql} GROUP BY 1`,
    [now, ...where.params],
    db,
  );
  const counts: Record<string, number> = {};
  for (const row of rows) counts[row.status] = row.n;
  return counts;
}

export async function threadBoard(filter: ThreadFilter, options: PageOptions = {}, now = Date.now()): Promise<ThreadBoard> {
  return snapshotRead(async (db) => {
    const { status, ...withoutStatus } = filter;
    const counts = await readStatusCounts(db, withoutStatus, now);
    const totals = { total: countOf(counts, status), attention: countOf(counts, status, ATTENTION_STATUSES) };
    const { page, pageSize, slices } = pageSlices(options, totals);
    const where = boardClause(filter, now);
    const rows: SqlViewRow[] = [];
    // One statement per slice: its keys found on the board's index alone (the rows skipped to
    // reach a page are never read), then only the page's rows read, in the keys' order.
    for (const { part, take, offset } of slices) {
      const only = part === null ? "" : ` AND ${part === "attention" ? "" : "NOT "}${ATTENTION_SQL}`;
      const page = `SELECT t.id, t."updatedAt" FROM "Thread" t WHERE ${where.sql}${only} ${NEWEST_FIRST} LIMIT ? OFFSET ?`;
      rows.push(...(await rowsOf<SqlViewRow>(`SELECT ${VIEW_COLUMNS} FROM (${page}) k ${BY_PAGE} ORDER BY k."updatedAt" DESC, k.id DESC`, [...where.params, take, offset], db)));
    }
    const threads = await withSurroundings(db, viewsOf(rows, now), now);
    return { threads, total: totals.total, page, pageSize, counts, stoppable: countOf(counts, status, STOPPABLE_STATUSES), serverTime: new Date(now).toISOString() };
  });
}

export async function threadRows(keys: number[], now = Date.now(), filter?: ThreadFilter): Promise<ThreadView[]> {
  if (keys.length === 0) return [];
  return snapshotRead(async (db) => {
    const where = filter ? boardClause(filter, now) : { sql: "TRUE", params: [] };
    const rows = await rowsOf<SqlViewRow>(`SELECT ${VIEW_COLUMNS} ${BY_KEYS} AND ${where.sql} ORDER BY t.id`, [keys, ...where.params], db);
    return withSurroundings(db, viewsOf(rows, now), now);
  });
}

/** Distinct values for the filter menus, in SQLite's (byte) order. */
export async function filterOptions(): Promise<FilterOptions> {
  const distinct = async (column: string) =>
    (await rowsOf<{ value: string }>(`SELECT ${column} AS value FROM "Thread" WHERE ${column} IS NOT NULL GROUP BY ${column} ORDER BY ${column} COLLATE "C"`, [])).map((row) => row.value);
  const [providers, models, sources] = await Promise.all([
    distinct("provider"),
    distinct("model"),
    rowsOf<{ id: string; name: string }>(`SELECT id, name FROM "Source" ORDER BY name COLLATE "C"`, []),
  ]);
  return { providers: providers.filter(Boolean), models: models.filter(Boolean), sources };
}

export function threadsByExternalId(externalId: string, sourceId?: string | null) {
  return postgresPrisma().thread.findMany({
    where: { externalId, ...(sourceId ? { sourceId } : {}) },
    include: threadInclude,
    orderBy: { updatedAt: "desc" },
  });
}

export async function stoppableThreadKeys(filter: ThreadFilter, now = Date.now()): Promise<number[]> {
  const status = filter.status?.length ? filter.status.filter((s) => STOPPABLE_STATUSES.includes(s)) : STOPPABLE_STATUSES;
  if (!status.length) return [];
  const where = boardClause({ ...filter, status }, now);
  return (await rowsOf<{ id: number }>(`SELECT t.id FROM "Thread" t WHERE ${where.sql} ORDER BY t.id`, where.params)).map((row) => row.id);
}

export async function threadExists(key: number): Promise<boolean> {
  return (await rowsOf(`SELECT 1 FROM "Thread" WHERE id = ?`, [key])).length > 0;
}

/** The thread page's own statements, as lib/db/threads.ts's DETAIL, times in epoch ms. */
const WITH_SOURCE = `FROM "Thread" t JOIN "Source" s ON s.id = t."sourceId"`;
const DETAIL = {
  thread: `SELECT ${VIEW_COLUMNS}, t.state, t."joinedTo" ${WITH_SOURCE} WHERE t.id = ?`,
  byExternalId: `SELECT ${VIEW_COLUMNS} ${WITH_SOURCE} WHERE t."sourceId" = ? AND t."externalId" = ?`,
  children: `SELECT ${VIEW_COLUMNS} ${WITH_SOURCE} WHERE t."sourceId" = ? AND t."parentExternalId" = ? ORDER BY t."createdAt", t.id`,
  episodes: `SELECT id, seq, "turnId", kind, policy, "maxAttempts", ${ms(`"startedAt"`)}, ${ms(`"endedAt"`)}, outcome, "outcomeCode",
    "outcomeReason", ${ms(`"resetAt"`)}, "attemptsMade", "reportedRetryMs" FROM "Episode" WHERE "threadId" = ? ORDER BY seq`,
  attempts: `SELECT a."episodeId", a.n, ${ms(`a."noticeAt"`)}, a."advisedDelayMs", ${ms(`a."expectedAt"`)}, a.estimated, ${ms(`a."deadlineAt"`)},
    ${ms(`a."startedAt"`)}, a."earlyByMs", a."httpStatus", a.code, a.message
    FROM "Episode" e JOIN "Attempt" a ON a."episodeId" = e.id WHERE e."threadId" = ? ORDER BY e.seq, a.n`,
  directives: `SELECT id, kind, origin, reason, state, "turnId", ${ms(`"createdAt"`)}, ${ms(`"deliveredAt"`)}, ${ms(`"acknowledgedAt"`)}, result, detail
    FROM "Directive" WHERE "threadId" = ? ORDER BY "createdAt", id COLLATE "C"`,
};

/** One thread for its page, as on SQLite, in one snapshot: a watchdog pass that commits meanwhile is seen whole or not at all. */
export function threadDetail(key: number, now = Date.now()): Promise<ThreadDetail | null> {
  return snapshotRead(async (db) => {
    const [thread] = await rowsOf<DetailRow>(DETAIL.thread, [key], db);
    if (!thread) return null;
    const one = async (text: string, params: unknown[]) => (await rowsOf<SqlViewRow>(text, params, db))[0] ?? null;
    const otherPaths = await rowsOf<OtherPathRow>(OTHER_PATHS, [[key]], db);
    const page = (threadKey: number) => eventPageOn(db, threadKey, { limit: EVENT_PAGE_SIZE });
    // One after another: the snapshot is one connection, which answers one statement at a time.
    const parent = thread.parentExternalId === null ? null : await one(DETAIL.byExternalId, [thread.sourceId, thread.parentExternalId]);
    const children = await rowsOf<SqlViewRow>(DETAIL.children, [thread.sourceId, thread.externalId], db);
    const joinedTo = thread.joinedTo === null ? null : await one(DETAIL.thread, [thread.joinedTo]);
    const episodes = await rowsOf<EpisodeRow>(DETAIL.episodes, [key], db);
    const attempts = await rowsOf<AttemptRow>(DETAIL.attempts, [key], db);
    const directives = await rowsOf<DirectiveHistoryRow>(DETAIL.directives, [key], db);
    const events = await page(key);
    const joinedEvents: EventPage[] = [];
    for (const other of otherPaths) joinedEvents.push(await page(other.key));
    const limits = await windowsBlockingOn(db, key, now);
    const rows: DetailRows = { thread, otherPaths, parent, children, joinedTo, episodes, attempts, directives, events, joinedEvents, limits };
    return toThreadDetail(rows, now);
  });
}
