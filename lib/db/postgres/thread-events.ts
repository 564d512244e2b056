import type pg from "pg";
import type { EventPage } from "@/lib/wire/types";
import { toEventPage, type PageRow } from "../records/thread-events";
import { pool } from "./pool";
import { ms, rowsOf } from "./sql";

/** The thread page's event reads of lib/db/events.ts on PostgreSQL: the same pages, through the (threadId, at) index. */
const PAGE_COLUMNS = `id, type, "nativeType", format, ${ms("at")}, ${ms(`"receivedAt"`)}, ${ms(`"lastAt"`)}, count, "turnId", attempt,
  "maxAttempts", "delayMs", kind, "httpStatus", code, message, late, (normalized::jsonb ->> 'clampedFrom')::numeric::bigint AS "clampedFrom"`;
const NEWEST = (columns: string) => `SELECT ${columns} FROM "Event" WHERE "threadId" = ? ORDER BY at DESC, id DESC LIMIT ?`;
const BEFORE = (columns: string) => `SELECT ${columns} FROM "Event" WHERE "threadId" = ?
  AND (at, id) < (SELECT at, id FROM "Event" WHERE id = ? AND "threadId" = ?) ORDER BY at DESC, id DESC LIMIT ?`;
// A thread page also shows the events of the threads joined to it (lib/db/thread-join.ts).
const RAW = `SELECT raw FROM "Event" WHERE id = ? AND ("threadId" = ? OR "threadId" IN (SELECT id FROM "Thread" WHERE "joinedTo" = ?))`;

/** One page of a thread's events on `client` (the thread page reads it inside its snapshot, threads.ts) or the pool. */
export async function eventPageOn(client: pg.ClientBase | pg.Pool, thread: number, options: { before?: number | null; limit: number; raw?: boolean }): Promise<EventPage> {
  const columns = options.raw ? `${PAGE_COLUMNS}, raw` : PAGE_COLUMNS;
  const rows =
    options.before == null
      ? await rowsOf<PageRow>(NEWEST(columns), [thread, options.limit + 1], client)
      : await rowsOf<PageRow>(BEFORE(columns), [thread, options.before, thread, options.limit + 1], client);
  return toEventPage(rows, options.limit);
}

export function threadEventPage(thread: number, options: { before?: number | null; limit: number; raw?: boolean }): Promise<EventPage> {
  return eventPageOn(pool(), thread, options);
}

export async function eventRaw(thread: number, seq: number): Promise<unknown> {
  const [row] = await rowsOf<{ raw: string }>(RAW, [seq, thread, thread]);
  return row === undefined ? undefined : (JSON.parse(row.raw) as unknown);
}
