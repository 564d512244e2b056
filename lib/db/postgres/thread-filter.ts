import {
  notJoinedSql as notJoinedIn,
  recordFilterSql as recordFilterIn,
  stalledSql as stalledIn,
  threadFilterSql as threadFilterIn,
  viewStatusSql as viewStatusIn,
  type Clause,
  type FilterDialect,
  type ThreadFilter,
} from "../thread-filter";
import { asciiLower, at } from "./sql";

/**
 * lib/db/thread-filter.ts's SQL form on PostgreSQL: the same rules in PostgreSQL's spelling —
 * quoted columns, times compared as TIMESTAMP(3) from epoch-ms parameters, lists as array
 * parameters, SQLite's ASCII-only case folding. The threads contract test runs both over the same rows.
 */
export const POSTGRES_FILTER: FilterDialect = {
  column: (t, name) => `${t}."${name}"`,
  time: at(),
  no: "false",
  inList: (column) => `${column} = ANY(?::text[])`,
  list: (values) => values,
  contains: (column) => `${asciiLower(column)} LIKE ? ESCAPE '\\'`,
  containsParam: (q) => `%${q.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/[A-Z]/g, (c) => c.toLowerCase())}%`,
};

export const stalledSql = (t = "t") => stalledIn(t, POSTGRES_FILTER);
export const viewStatusSql = (t = "t") => viewStatusIn(t, POSTGRES_FILTER);
export const notJoinedSql = (t = "t") => notJoinedIn(t, POSTGRES_FILTER);
export const inList = POSTGRES_FILTER.inList;
export const threadFilterSql = (filter: Omit<ThreadFilter, "from" | "to">, now: number, t = "t"): Clause => threadFilterIn(filter, now, t, POSTGRES_FILTER);
export const recordFilterSql = (filter: ThreadFilter, now: number): Clause => recordFilterIn(filter, now, POSTGRES_FILTER);
