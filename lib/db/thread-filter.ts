import type { Prisma } from "./generated/client";
import { WAITING_STATUSES as WAITING } from "@/lib/threads/statuses";

/**
 * The board's thread filter and the `stalled` rule, each in its two forms side by side: a Prisma
 * `where` for the typed reads and SQL on thread alias `t` for the aggregations and exports
 * Prisma cannot express. thread-filter.test.ts runs both forms over the same rows.
 *
 * `stalled` is never stored: it is the engine's viewStatus() (lib/retry/reducer.ts) read from the
 * projected columns — a waiting status whose deadline has passed before the watchdog ended it.
 */

export interface ThreadFilter {
  status?: string[];
  kind?: string[];
  provider?: string[];
  model?: string[];
  source?: string[];
  q?: string;
  /** updatedAt range, epoch ms. */
  from?: number;
  to?: number;
  /** Archived or snoozed threads: hidden by default (lib/threads/filter.ts). */
  archived?: "show" | "only";
}

/** Hidden from the board: archived, or snoozed until a time still to come (spelled out both ways: NOT over a NULL comparison drops rows). */
function hiddenWhere(now: number): Prisma.ThreadWhereInput {
  return { OR: [{ archivedAt: { not: null } }, { snoozedUntil: { gt: new Date(now) } }] };
}

function shownWhere(now: number): Prisma.ThreadWhereInput {
  return { archivedAt: null, OR: [{ snoozedUntil: null }, { snoozedUntil: { lte: new Date(now) } }] };
}

function hiddenSql(t: string, d: FilterDialect): string {
  return `(${d.column(t, "archivedAt")} IS NOT NULL OR coalesce(${d.column(t, "snoozedUntil")} > ${d.time}, ${d.no}))`;
}

export interface Clause {
  sql: string;
  params: unknown[];
}

/**
 * How a store's SQL spells what the filter's SQL form needs (lib/db/postgres/thread-filter.ts
 * gives PostgreSQL's): the rules are written once, below.
 */
export interface FilterDialect {
  /** Column `name` of table alias `t`. */
  column(t: string, name: string): string;
  /** A `?` epoch-ms parameter as time columns compare with it. */
  time: string;
  /** Boolean false, for coalesce() over a comparison. */
  no: string;
  /** `column` is one of a list given as one `?` parameter, and that parameter. */
  inList(column: string): string;
  list(values: readonly string[]): unknown;
  /** `column` contains `?`, ASCII case-insensitive (Prisma's `contains` on SQLite: LIKE), and that parameter. */
  contains(column: string): string;
  containsParam(q: string): string;
}

const json = (values: readonly unknown[]) => JSON.stringify(values);
export const inList = (column: string) => `${column} IN (SELECT value FROM json_each(?))`;

export const SQLITE_FILTER: FilterDialect = {
  column: (t, name) => `${t}.${name}`,
  time: "?",
  no: "0",
  inList,
  list: json,
  contains: (column) => `${column} LIKE ? ESCAPE '\\'`,
  // LIKE '%q%' (ASCII case-insensitive), wildcards escaped.
  containsParam: (q) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`,
};

/** The stalled rule on a row already read (the deadline as a Date, as Prisma returns it, or epoch ms, as SQL does). */
export function isStalledRow(row: { status: string; deadlineAt: Date | number | null }, now: number): boolean {
  return WAITING.includes(row.status) && row.deadlineAt !== null && Number(row.deadlineAt) <= now;
}

/** The stalled rule as a Prisma condition. */
export function stalledWhere(now: number): Prisma.ThreadWhereInput {
  return { status: { in: WAITING }, deadlineAt: { lte: new Date(now) } };
}

/** The stalled rule in SQL on thread alias `t` (one `?`: now). */
export function stalledSql(t = "t", d = SQLITE_FILTER): string {
  return `(${d.column(t, "status")} IN (${WAITING.map((w) => `'${w}'`).join(", ")}) AND ${d.column(t, "deadlineAt")} <= ${d.time})`;
}

/** The status a reader shows, in SQL (one `?`: now). */
export function viewStatusSql(t = "t", d = SQLITE_FILTER): string {
  return `CASE WHEN ${stalledSql(t, d)} THEN 'stalled' ELSE ${d.column(t, "status")} END`;
}

/**
 * Threads that show on their own: not joined to the thread of another path that reports the same
 * agent thread (lib/db/thread-join.ts), which shows and counts them. Every filter includes it.
 */
export const notJoinedWhere: Prisma.ThreadWhereInput = { joinedTo: null };

/** notJoinedWhere in SQL on thread alias `t`. */
export function notJoinedSql(t = "t", d = SQLITE_FILTER): string {
  return `${d.column(t, "joinedTo")} IS NULL`;
}

function statusWhere(status: string, now: number): Prisma.ThreadWhereInput {
  if (status === "stalled") return stalledWhere(now);
  if (WAITING.includes(status)) return { status, OR: [{ deadlineAt: null }, { deadlineAt: { gt: new Date(now) } }] };
  return { status };
}

export function threadWhere(filter: ThreadFilter, now: number): Prisma.ThreadWhereInput {
  const and: Prisma.ThreadWhereInput[] = [notJoinedWhere];
  if (filter.status?.length) and.push({ OR: filter.status.map((status) => statusWhere(status, now)) });
  if (filter.kind?.length) and.push({ OR: [{ retryKind: { in: filter.kind } }, { lastErrorKind: { in: filter.kind } }] });
  if (filter.provider?.length) and.push({ provider: { in: filter.provider } });
  if (filter.model?.length) and.push({ model: { in: filter.model } });
  if (filter.source?.length) and.push({ OR: [{ sourceId: { in: filter.source } }, { source: { name: { in: filter.source } } }] });
  if (filter.q) {
    const q = filter.q;
    and.push({ OR: TEXT_COLUMNS.map((column) => ({ [column]: { contains: q } })) });
  }
  if (filter.from !== undefined) and.push({ updatedAt: { gte: new Date(filter.from) } });
  if (filter.to !== undefined) and.push({ updatedAt: { lte: new Date(filter.to) } });
  if (filter.archived === "only") and.push(hiddenWhere(now));
  else if (filter.archived !== "show") and.push(shownWhere(now));
  return { AND: and };
}

/**
 * The thread filter for what is counted and exported rather than shown: archive and snooze hide a
 * thread from the board, not from the record, and the rollups that serve insights and metrics
 * count every thread, so the raw reads beside them must too (unless the filter asks otherwise).
 */
export function recordFilterSql(filter: ThreadFilter, now: number, d = SQLITE_FILTER): Clause {
  return threadFilterSql({ ...filter, archived: filter.archived ?? "show" }, now, "t", d);
}

/** The columns the free-text filter searches. */
const TEXT_COLUMNS = ["externalId", "title", "lastErrorMessage", "agent", "model"] as const;

/**
 * threadWhere() as SQL on thread alias `t`. Time is left to the caller: insights and exports
 * bound facts by their own time, not the threads' updatedAt.
 */
export function threadFilterSql(filter: Omit<ThreadFilter, "from" | "to">, now: number, t = "t", d = SQLITE_FILTER): Clause {
  const c = (name: string) => d.column(t, name);
  const parts: string[] = [notJoinedSql(t, d)];
  const params: unknown[] = [];
  if (filter.status?.length) {
    const ors = filter.status.map((status) => {
      if (status === "stalled") {
        params.push(now);
        return stalledSql(t, d);
      }
      if (WAITING.includes(status)) {
        params.push(status, now);
        return `(${c("status")} = ? AND NOT coalesce(${c("deadlineAt")} <= ${d.time}, ${d.no}))`;
      }
      params.push(status);
      return `${c("status")} = ?`;
    });
    parts.push(`(${ors.join(" OR ")})`);
  }
  if (filter.kind?.length) {
    parts.push(`(${d.inList(c("retryKind"))} OR ${d.inList(c("lastErrorKind"))})`);
    params.push(d.list(filter.kind), d.list(filter.kind));
  }
  if (filter.provider?.length) {
    parts.push(d.inList(c("provider")));
    params.push(d.list(filter.provider));
  }
  if (filter.model?.length) {
    parts.push(d.inList(c("model")));
    params.push(d.list(filter.model));
  }
  if (filter.source?.length) {
    parts.push(`(${d.inList(c("sourceId"))} OR ${c("sourceId")} IN (SELECT id FROM "Source" WHERE ${d.inList("name")}))`);
    params.push(d.list(filter.source), d.list(filter.source));
  }
  if (filter.q) {
    const pattern = d.containsParam(filter.q);
    parts.push(`(${TEXT_COLUMNS.map((column) => d.contains(c(column))).join(" OR ")})`);
    params.push(...TEXT_COLUMNS.map(() => pattern));
  }
  if (filter.archived !== "show") {
    parts.push(filter.archived === "only" ? hiddenSql(t, d) : `NOT ${hiddenSql(t, d)}`);
    params.push(now);
  }
  return { sql: parts.join(" AND "), params };
}
