import type pg from "pg";
import { inTransaction, pool } from "./pool";
import { msFromTimestamp, timestampFromMs } from "./time";

/**
 * The read modules on PostgreSQL compose their SQL as the SQLite ones do — clauses with `?`
 * placeholders and their parameters side by side — and number the placeholders when they run, so
 * a filter's clause can be put anywhere in a statement. No statement here uses `?` otherwise (no
 * jsonb `?` operator, no question mark in a literal).
 */
export function numbered(text: string): string {
  let n = 0;
  return text.replace(/\?/g, () => `$${++n}`);
}

/** Rows of a `?`-placeholder statement, on `client` (one snapshot) or else the pool. */
export async function rowsOf<T extends object>(text: string, params: unknown[], client: pg.ClientBase | pg.Pool = pool()): Promise<T[]> {
  return (await client.query<T>(numbered(text), params)).rows;
}

/** A stored time selected as epoch ms under its own name, as SQLite answers it. */
export const ms = (column: string, alias = column.replace(/^.*\./, "").replaceAll('"', "")) => `${msFromTimestamp(column)} AS "${alias}"`;

/**
 * Lower case as SQLite's lower() and LIKE fold it: ASCII letters only. PostgreSQL's lower() folds
 * every letter, except under the C collation, where it folds A–Z alone, as translate() of A–Z
 * did, at a tenth of its cost. The board's trigram index is on these very expressions
 * (prisma/postgres/migrations/20261208100000_thread_search_lower).
 */
export const asciiLower = (expr: string) => `lower((${expr}) COLLATE "C")`;

/** The TIMESTAMP(3) of an epoch-ms `?` parameter. */
export const at = () => timestampFromMs("?");

/**
 * Several reads that must see one snapshot (a board page and its counts): one pooled connection
 * in a REPEATABLE READ, READ ONLY transaction — PostgreSQL's answer to SQLite's read transaction.
 */
export function snapshotRead<T>(read: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  // Its modes in the BEGIN itself: a board answer is a handful of statements, each one a round trip.
  return inTransaction(read, "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY");
}
