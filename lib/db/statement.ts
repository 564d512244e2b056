import type Database from "better-sqlite3";
import { db } from "./client";

export type Sql = Database.Database;

/**
 * The one way lib/db runs SQL: a statement is prepared on first use and kept per connection and
 * text, so hot statements are prepared once and rare ones cost nothing at start. Texts built from
 * a filter are kept too; their variety is bounded by the filter's shape, and the oldest go first.
 */
const MAX_KEPT = 500;

interface Kept {
  rows: Map<string, Database.Statement>;
  plucked: Map<string, Database.Statement>;
}
const kept = new WeakMap<Sql, Kept>();
// The process-wide connection is by far the most used: remembered to skip the WeakMap lookup.
let last: { sql: Sql; kept: Kept } | null = null;

function keptFor(sql: Sql): Kept {
  if (last?.sql === sql) return last.kept;
  let entry = kept.get(sql);
  if (!entry) {
    entry = { rows: new Map(), plucked: new Map() };
    kept.set(sql, entry);
  }
  last = { sql, kept: entry };
  return entry;
}

function prepared(map: Map<string, Database.Statement>, text: string, make: () => Database.Statement): Database.Statement {
  let found = map.get(text);
  if (!found) {
    if (map.size >= MAX_KEPT) map.delete(map.keys().next().value!);
    found = make();
    map.set(text, found);
  }
  return found;
}

export function statement(text: string, sql: Sql = db().sql): Database.Statement {
  return prepared(keptFor(sql).rows, text, () => sql.prepare(text));
}

/** A statement whose rows are their first column's value. */
export function pluck(text: string, sql: Sql = db().sql): Database.Statement {
  return prepared(keptFor(sql).plucked, text, () => sql.prepare(text).pluck());
}

/** Stored times are epoch ms; what lib/db returns to clients is ISO-8601 UTC. */
export const isoOrNull = (ms: number | null) => (ms == null ? null : new Date(ms).toISOString());
