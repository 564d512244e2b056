import { WAITING_STATUSES as WAITING } from "@/lib/threads/statuses";
import type { Clause, ThreadFilter } from "../thread-filter";
import { asciiLower, at } from "./sql";

/**
 * lib/db/thread-filter.ts's SQL form on PostgreSQL (`?` placeholders, numbered by sql.ts): the
 * same rules, on quoted columns, times compared as TIMESTAMP(3) from epoch-ms parameters, lists
 * as array parameters. thread-filter.pg.test.ts runs it beside the SQLite form over the same rows.
 */


/** The stalled rule on thread alias `t` (one `?`: now). */
export function stalledSql(t = "t"): string {
  return `(${t}."status" IN (${WAITING.map((w) => `'${w}'`).join(", ")}) AND ${t}."deadlineAt" <= ${at()})`;
}

/** The status a reader shows (one `?`: now). */
export function viewStatusSql(t = "t"): string {
  return `CASE WHEN ${stalledSql(t)} THEN 'stalled' ELSE ${t}."status" END`;
}

export function notJoinedSql(t = "t"): string {
  return `${t}."joinedTo" IS NULL`;
}

function hiddenSql(t: string): string {
  return `(${t}."archivedAt" IS NOT NULL OR coalesce(${t}."snoozedUntil" > ${at()}, false))`;
}

/** `column` is one of a list given as one array parameter. */
export const inList = (column: string) => `${column} = ANY(?::text[])`;

const TEXT_COLUMNS = ["externalId", "title", "lastErrorMessage", "agent", "model"] as const;

/** threadFilterSql of lib/db/thread-filter.ts, on PostgreSQL. */
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
        return `(${t}."status" = ? AND NOT coalesce(${t}."deadlineAt" <= ${at()}, false))`;
      }
      params.push(status);
      return `${t}."status" = ?`;
    });
    parts.push(`(${ors.join(" OR ")})`);
  }
  if (filter.kind?.length) {
    parts.push(`(${inList(`${t}."retryKind"`)} OR ${inList(`${t}."lastErrorKind"`)})`);
    params.push(filter.kind, filter.kind);
  }
  if (filter.provider?.length) {
    parts.push(inList(`${t}."provider"`));
    params.push(filter.provider);
  }
  if (filter.model?.length) {
    parts.push(inList(`${t}."model"`));
    params.push(filter.model);
  }
  if (filter.source?.length) {
    parts.push(`(${inList(`${t}."sourceId"`)} OR ${t}."sourceId" IN (SELECT id FROM "Source" WHERE ${inList("name")}))`);
    params.push(filter.source, filter.source);
  }
  if (filter.q) {
    const pattern = `%${filter.q.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/[A-Z]/g, (c) => c.toLowerCase())}%`;
    parts.push(`(${TEXT_COLUMNS.map((c) => `${asciiLower(`${t}."${c}"`)} LIKE ? ESCAPE '\\'`).join(" OR ")})`);
    params.push(...TEXT_COLUMNS.map(() => pattern));
  }
  if (filter.archived !== "show") {
    parts.push(filter.archived === "only" ? hiddenSql(t) : `NOT ${hiddenSql(t)}`);
    params.push(now);
  }
  return { sql: parts.join(" AND "), params };
}

/** recordFilterSql of lib/db/thread-filter.ts: archived and snoozed threads count in the record. */
export function recordFilterSql(filter: ThreadFilter, now: number): Clause {
  return threadFilterSql({ ...filter, archived: filter.archived ?? "show" }, now);
}
