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

function hiddenSql(t: string): string {
  return `(${t}.archivedAt IS NOT NULL OR coalesce(${t}.snoozedUntil > ?, 0))`;
}

export interface Clause {
  sql: string;
  params: unknown[];
}

/** The stalled rule on a row already read (the deadline as a Date, as Prisma returns it, or epoch ms, as SQL does). */
export function isStalledRow(row: { status: string; deadlineAt: Date | number | null }, now: number): boolean {
  return WAITING.includes(row.status) && row.deadlineAt !== null && Number(row.deadlineAt) <= now;
}

/** The stalled rule as a Prisma condition. */
export function stalledWhere(now: number): Prisma.ThreadWhereInput {
  return { status: { in: WAITING }, deadlineAt: { lte: new Date(now) } };
}

/** The stalled rule in SQL on thread alias `t` (one `?`: now). */
export function stalledSql(t = "t"): string {
  return `(${t}.status IN (${WAITING.map((w) => `'${w}'`).join(", ")}) AND ${t}.deadlineAt <= ?)`;
}

/** The status a reader shows, in SQL (one `?`: now). */
export function viewStatusSql(t = "t"): string {
  return `CASE WHEN ${stalledSql(t)} THEN 'stalled' ELSE ${t}.status END`;
}

/**
 * Threads that show on their own: not joined to the thread of another path that reports the same
 * agent thread (lib/db/thread-join.ts), which shows and counts them. Every filter includes it.
 */
export const notJoinedWhere: Prisma.ThreadWhereInput = { joinedTo: null };

/** notJoinedWhere in SQL on thread alias `t`. */
export function notJoinedSql(t = "t"): string {
  return `${t}.joinedTo IS NULL`;
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
export function recordFilterSql(filter: ThreadFilter, now: number): Clause {
  return threadFilterSql({ ...filter, archived: filter.archived ?? "show" }, now);
}

/** The columns the free-text filter searches. */
const TEXT_COLUMNS = ["externalId", "title", "lastErrorMessage", "agent", "model"] as const;

const json = (values: readonly unknown[]) => JSON.stringify(values);
export const inList = (column: string) => `${column} IN (SELECT value FROM json_each(?))`;

/**
 * threadWhere() as SQL on thread alias `t`. Time is left to the caller: insights and exports
 * bound facts by their own time, not the threads' updatedAt.
 */
export function threadFilterSql(filter: Omit<ThreadFilter, "from" | "to">, now: number, t = "t"): Clause {
  const parts: string[] = [notJoinedSql(t)];
  const params: unknown[] = [];
  if (filter.status?.length) {
    const ors = filter.status.map((status) => {
      if (status === "stalled") {
        params.push(now);
        return stalledSql(t);
      }
      if (WAITING.includes(status)) {
        params.push(status, now);
        return `(${t}.status = ? AND NOT coalesce(${t}.deadlineAt <= ?, 0))`;
      }
      params.push(status);
      return `${t}.status = ?`;
    });
    parts.push(`(${ors.join(" OR ")})`);
  }
  if (filter.kind?.length) {
    parts.push(`(${inList(`${t}.retryKind`)} OR ${inList(`${t}.lastErrorKind`)})`);
    params.push(json(filter.kind), json(filter.kind));
  }
  if (filter.provider?.length) {
    parts.push(inList(`${t}.provider`));
    params.push(json(filter.provider));
  }
  if (filter.model?.length) {
    parts.push(inList(`${t}.model`));
    params.push(json(filter.model));
  }
  if (filter.source?.length) {
    parts.push(`(${inList(`${t}.sourceId`)} OR ${t}.sourceId IN (SELECT id FROM "Source" WHERE ${inList("name")}))`);
    params.push(json(filter.source), json(filter.source));
  }
  if (filter.q) {
    // Prisma's `contains` on SQLite: LIKE '%q%' (ASCII case-insensitive), wildcards escaped.
    const pattern = `%${filter.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    parts.push(`(${TEXT_COLUMNS.map((c) => `${t}.${c} LIKE ? ESCAPE '\\'`).join(" OR ")})`);
    params.push(...TEXT_COLUMNS.map(() => pattern));
  }
  if (filter.archived !== "show") {
    parts.push(filter.archived === "only" ? hiddenSql(t) : `NOT ${hiddenSql(t)}`);
    params.push(now);
  }
  return { sql: parts.join(" AND "), params };
}
