import { keyLookups } from "@/lib/ingest/key";
import type { RadarEvent } from "@/lib/retry";
import type { EventPage } from "@/lib/wire/types";
import { committedRead } from "./client";
import * as postgres from "./postgres/thread-events";
import { eventColumns, foldedProgress, toRadarEvent, type EventRow } from "./records/events";
import { toEventPage, type PageRow } from "./records/thread-events";
import { pluck, statement, type Sql } from "./statement";
import { onEitherStore } from "./store";

/** Stored lines of the sources: their keys (idempotency), the event rows and progress folding. */

/** Which of a batch's keys this source already stored, on an event or in the key ledger: one query per batch. */
const KEYS_STORED = `SELECT k.value FROM json_each(@keys) k
  WHERE EXISTS (SELECT 1 FROM "Event" WHERE sourceId = @sourceId AND idempotencyKey = k.value)
     OR EXISTS (SELECT 1 FROM "IngestKey" WHERE sourceId = @sourceId AND key = k.value)`;
const INSERT_KEY = `INSERT INTO "IngestKey" (sourceId, key, eventId) VALUES (?, ?, ?)`;
// Positional parameters: binding an array costs less than naming 20 fields per row.
const INSERT_EVENT = `INSERT INTO "Event" (sourceId, threadId, idempotencyKey, format, nativeType, type, at, receivedAt, lastAt, count,
    turnId, attempt, maxAttempts, delayMs, kind, httpStatus, code, message, late, raw, normalized)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)`;
const FOLD_PROGRESS = `UPDATE "Event" SET count = count + ?, lastAt = max(coalesce(lastAt, at), ?), normalized = ? WHERE id = ?`;
const EVENT_NORMALIZED = `SELECT normalized FROM "Event" WHERE id = ?`;
const MARK_LATE = `UPDATE "Event" SET late = ? WHERE id = ?`;
const THREAD_EVENTS = `SELECT id, normalized FROM "Event" WHERE threadId = ? ORDER BY at, id`;

/** The event statements of a unit of work (see unit-of-work.ts); synchronous on SQLite. */
export const eventRows = {
  /** Keys of the batch already stored, under their own form or, for a derived key, its earlier one (key.ts). */
  storedKeys(sourceId: string, keys: string[]): Set<string> {
    if (keys.length === 0) return new Set();
    const { lookup, stored } = keyLookups(keys);
    return stored(pluck(KEYS_STORED).all({ sourceId, keys: JSON.stringify(lookup) }) as string[]);
  },

  /**
   * Stores one accepted line (its key is unique per source); returns the event id, which is its
   * sequence. A retry notice's rollup facts are the caller's to add (noticeFacts), once per unit
   * of work for all the notices it stored.
   */
  insertEvent(row: EventRow): number {
    const c = eventColumns(row);
    const info = statement(INSERT_EVENT).run(
      row.sourceId, row.threadId, row.idempotencyKey, row.format, row.nativeType,
      c.type, c.at, c.receivedAt, c.lastAt, c.count, c.turnId, c.attempt, c.maxAttempts, c.delayMs, c.kind, c.httpStatus, c.code, c.message, c.raw, c.normalized,
    );
    return Number(info.lastInsertRowid);
  },

  /**
   * Progress deltas arrive by the hundred; they are folded into the open progress row of the
   * thread (count and last time) instead of flooding the event table. The key is still recorded.
   */
  foldProgress(sourceId: string, eventId: number, key: string, count: number, at: number): void {
    statement(FOLD_PROGRESS).run(count, at, foldedProgress(pluck(EVENT_NORMALIZED).get(eventId) as string, count, at), eventId);
    statement(INSERT_KEY).run(sourceId, key, eventId);
  },

  markLate(eventId: number, late: boolean): void {
    statement(MARK_LATE).run(late ? 1 : 0, eventId);
  },

  /** A thread's events in reducer order (event time, then sequence), for replays. */
  threadEvents(threadId: number): RadarEvent[] {
    return (statement(THREAD_EVENTS).all(threadId) as { id: number; normalized: string }[]).map(toRadarEvent);
  },
};

/**
 * The thread page reads events a page at a time, newest first in reducer order (event time, then
 * sequence), through the (threadId, at) index: a page costs the same on a thread of 10 events or
 * of 100k. Raw payloads are left out unless asked for; one event's raw is read on its own.
 */
const PAGE_COLUMNS = `id, type, nativeType, format, at, receivedAt, lastAt, count, turnId, attempt, maxAttempts, delayMs, kind,
  httpStatus, code, message, late, json_extract(normalized, '$.clampedFrom') AS clampedFrom`;
const NEWEST = `SELECT ${PAGE_COLUMNS} FROM "Event" WHERE threadId = @thread ORDER BY at DESC, id DESC LIMIT @limit`;
const BEFORE = `SELECT ${PAGE_COLUMNS} FROM "Event" WHERE threadId = @thread
  AND (at, id) < (SELECT at, id FROM "Event" WHERE id = @before AND threadId = @thread) ORDER BY at DESC, id DESC LIMIT @limit`;
// A thread page also shows the events of the threads joined to it (lib/db/thread-join.ts).
const RAW = `SELECT raw FROM "Event" WHERE id = @seq AND (threadId = @thread OR threadId IN (SELECT id FROM "Thread" WHERE joinedTo = @thread))`;

/** The page statements, for a test that checks their query plans. */
export const EVENT_PAGE_SQL = { newest: NEWEST, before: BEFORE };

/**
 * One page of a thread's events, newest first, before the event `before` (its seq) or from the
 * newest; `earlier` is the seq to ask for the page before this one, null when there is none.
 * Synchronous on `sql`, so the thread page reads it inside its own snapshot (lib/db/threads.ts).
 */
export function eventPageOn(sql: Sql, thread: number, options: { before?: number | null; limit: number; raw?: boolean }): EventPage {
  const text = options.before == null ? NEWEST : BEFORE;
  const withRaw = options.raw ? text.replace(PAGE_COLUMNS, `${PAGE_COLUMNS}, raw`) : text;
  return toEventPage(statement(withRaw, sql).all({ thread, before: options.before ?? null, limit: options.limit + 1 }) as PageRow[], options.limit);
}

/** A page of committed events: it never waits behind ingestion. */
function threadEventPageOnSqlite(thread: number, options: { before?: number | null; limit: number; raw?: boolean }): Promise<EventPage> {
  return committedRead((sql) => eventPageOn(sql, thread, options));
}

/** One event's raw payload as the source sent it (credentials masked at ingestion); undefined when the thread (or one joined to it) has no such event. */
function eventRawOnSqlite(thread: number, seq: number): Promise<unknown> {
  return committedRead((sql) => {
    const raw = pluck(RAW, sql).get({ seq, thread }) as string | undefined;
    return raw === undefined ? undefined : (JSON.parse(raw) as unknown);
  });
}

export const { threadEventPage, eventRaw } = onEitherStore({ threadEventPage: threadEventPageOnSqlite, eventRaw: eventRawOnSqlite }, postgres);
