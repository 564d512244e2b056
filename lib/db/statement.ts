import type Database from "better-sqlite3";
import { db } from "./client";

export type Sql = Database.Database;

/**
 * The one way lib/db runs SQL: a statement is prepared on first use and kept per connection and
 * text, so hot statements are prepared once and rare ones cost nothing at start. Texts built from
 * a filter are kept too; their variety is bounded by the filter's shape, and the oldest go first.
 */
const MAX_KEPT = 500;
const kept = new WeakMap<Sql, Map<string, Database.Statement>>();

export function statement(text: string, sql: Sql = db().sql): Database.Statement {
  let perConnection = kept.get(sql);
  if (!perConnection) {
    perConnection = new Map();
    kept.set(sql, perConnection);
  }
  let prepared = perConnection.get(text);
  if (!prepared) {
    if (perConnection.size >= MAX_KEPT) perConnection.delete(perConnection.keys().next().value!);
    prepared = sql.prepare(text);
    perConnection.set(text, prepared);
  }
  return prepared;
}

/** A statement whose rows are their first column's value. */
export function pluck(text: string, sql: Sql = db().sql): Database.Statement {
  return statement(`${text} /* pluck */`, sql).pluck();
}
