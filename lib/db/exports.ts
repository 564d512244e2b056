import type { ExportQuery } from "@/lib/insights/range";
import type { ExportKind, ExportRow } from "@/lib/insights/stream";
import { auditWhere, type AuditFilter } from "./audit";
import { db, serialized } from "./client";
import { factFilterSql, RETRIED_AT_SQL, waitMsSql } from "./fact-sql";
import { statement, type Sql } from "./statement";
import { recordFilterSql } from "./thread-filter";
import * as postgres from "./postgres/exports";
import { AUDIT_COLUMNS, keysetPages, PAGE_SIZE, present, type PagedQuery } from "./records/exports";
import { onEitherStore } from "./store";
import { THREAD_SELECT } from "./thread-projection";

export { AUDIT_COLUMNS, EXPORT_COLUMNS, TIMELINE_COLUMNS } from "./records/exports";

/**
 * Exports read in keyset pages (`WHERE (time, id) > last ORDER BY time, id LIMIT n`): each page is one short
 * query, nothing stays open between pages (the shared better-sqlite3 connection stays free for
 * ingestion), and memory holds one page whatever the export's size. A page is produced only
 * when the response stream asks for it. Rows arriving during an export may or may not appear.
 *
 * Column names are a documented contract (README "Exports"): add columns at the end, never
 * rename. Times are ISO-8601 UTC, durations integer milliseconds, empty values null.
 */

/**
 * Which rows a kind exports, all within [from, to) when a range is given, and in which order
 * (the keyset, so each page starts where the last ended, through an index):
 * - threads: the board's filter, and some event in the range (active then, whenever their row
 *   was last updated); in creation order;
 * - episodes: those overlapping the range, by start time;
 * - attempts: those noticed in the range, by notice time.
 * For episodes and attempts `kind` is their own kind (see factFilterSql).
 */
function pagedQuery(kind: ExportKind, query: ExportQuery, now: number): PagedQuery {
  const { range, filter } = query;
  if (kind === "threads") {
    const where = recordFilterSql(filter, now);
    const active = range ? `EXISTS (SELECT 1 FROM "Event" e WHERE e.threadId = t.id AND e.at >= ? AND e.at < ?) AND` : "";
    return {
      text: `${THREAD_SELECT} WHERE (t.id, t.id) > (?, ?) AND ${active} ${where.sql} ORDER BY t.id LIMIT ?`,
      before: [now],
      after: [...(range ? [range.from, range.to] : []), ...where.params],
    };
  }
  const fact = factFilterSql(filter, "ep.kind", now);
  const where = { sql: `${fact.kind.sql} AND ${fact.thread.sql}`, params: [...fact.kind.params, ...fact.thread.params] };
  const horizon = Math.min(range?.to ?? now, now);
  if (kind === "episodes") {
    const inRange = range ? "ep.startedAt < ? AND (ep.endedAt IS NULL OR ep.endedAt >= ?) AND" : "";
    return {
      text: `SELECT ep.startedAt AS _sort, ep.id AS _key, t.externalId AS threadId, t.sourceId, t.agent, t.provider, t.model,
          ep.seq AS episodeSeq, ep.turnId, ep.kind, ep.policy, ep.maxAttempts,
          (SELECT count(*) FROM "Attempt" a WHERE a.episodeId = ep.id) AS attempts,
          ep.startedAt, ep.endedAt, ep.outcome, ep.outcomeCode, ep.outcomeReason, ep.resetAt,
          (SELECT coalesce(sum(${waitMsSql("?")}), 0) + CASE WHEN count(*) = 0 THEN coalesce(ep.reportedRetryMs, 0) ELSE 0 END
            FROM "Attempt" a WHERE a.episodeId = ep.id) AS timeLostMs,
          ep.attemptsMade, ep.reportedRetryMs
        FROM "Episode" ep JOIN "Thread" t ON t.id = ep.threadId
        WHERE (ep.startedAt, ep.id) > (?, ?) AND ${inRange} ${where.sql} ORDER BY ep.startedAt, ep.id LIMIT ?`,
      before: [horizon, horizon],
      after: [...(range ? [range.to, range.from] : []), ...where.params],
    };
  }
  const inRange = range ? "a.noticeAt >= ? AND a.noticeAt < ? AND" : "";
  return {
    text: `SELECT a.noticeAt AS _sort, a.id AS _key, t.externalId AS threadId, t.sourceId, t.agent, t.provider, t.model,
        ep.seq AS episodeSeq, ep.kind, ep.policy, a.n, a.noticeAt, a.advisedDelayMs, a.expectedAt, a.estimated, a.deadlineAt,
        a.startedAt, ${RETRIED_AT_SQL} AS retriedAt, ${RETRIED_AT_SQL} - a.noticeAt AS actualGapMs, a.earlyByMs,
        ${waitMsSql("?")} AS waitMs, a.httpStatus, a.code, a.message
      FROM "Attempt" a JOIN "Episode" ep ON ep.id = a.episodeId JOIN "Thread" t ON t.id = ep.threadId
      WHERE (a.noticeAt, a.id) > (?, ?) AND ${inRange} ${where.sql} ORDER BY a.noticeAt, a.id LIMIT ?`,
    before: [horizon, horizon],
    after: [...(range ? [range.from, range.to] : []), ...where.params],
  };
}

/** Pages of export rows; each `next()` runs one query. */
export function exportPages(kind: ExportKind, query: ExportQuery, now: number, sql: Sql = db().sql, pageSize = PAGE_SIZE): AsyncGenerator<ExportRow[]> {
  return pagesOf(pagedQuery(kind, query, now), sql, pageSize);
}


/** The audit log in time order, with the audit page's filter. */
export function auditExportPages(filter: AuditFilter, sql: Sql = db().sql, pageSize = PAGE_SIZE): AsyncGenerator<ExportRow[]> {
  const where = auditWhere(filter);
  const text = `SELECT at AS _sort, id AS _key, ${AUDIT_COLUMNS.join(", ")} FROM "AuditEntry"
    WHERE (at, id) > (?, ?) AND ${where.sql} ORDER BY at, id LIMIT ?`;
  return pagesOf({ text, before: [], after: where.params }, sql, pageSize);
}

function pagesOf({ text, before, after }: PagedQuery, sql: Sql, pageSize: number): AsyncGenerator<ExportRow[]> {
  return keysetPages(
    [Number.MIN_SAFE_INTEGER, 0],
    (cursor) => serialized(() => statement(text, sql).all(...before, ...cursor, ...after, pageSize) as Record<string, unknown>[]),
    (last) => [last._sort as number, last._key as number],
    pageSize,
  );
}

/** One thread as the first line / envelope of its timeline export. */
function threadExportRowOnSqlite(key: number, now: number, sql: Sql = db().sql): Promise<ExportRow | null> {
  return serialized(() => {
    const row = statement(`${THREAD_SELECT} WHERE t.id = ?`, sql).get(now, key) as Record<string, unknown> | undefined;
    return row ? present(row) : null;
  });
}

/**
 * A thread's timeline: its episodes, attempts and events in one time order (episode before its
 * first attempt before the event that announced it), paged on (at, rank, key).
 */
const TIMELINE = `SELECT * FROM (
    SELECT ep.startedAt AS at, 0 AS _rank, ep.id AS _key, 'episode' AS record, ep.endedAt AS endAt, ep.seq AS episodeSeq,
      NULL AS eventSeq, NULL AS type, NULL AS nativeType, NULL AS format, ep.kind, ep.policy, NULL AS n, ep.maxAttempts,
      NULL AS delayMs, NULL AS advisedDelayMs, NULL AS expectedAt, NULL AS estimated, NULL AS actualGapMs, NULL AS earlyByMs,
      ep.outcome, ep.outcomeCode, NULL AS httpStatus, NULL AS code, ep.outcomeReason AS message, NULL AS count, NULL AS late,
      NULL AS receivedAt, NULL AS raw
    FROM "Episode" ep WHERE ep.threadId = ?
    UNION ALL
    SELECT a.noticeAt, 1, a.id, 'attempt', a.startedAt, ep.seq, NULL, NULL, NULL, NULL, ep.kind, ep.policy, a.n, NULL,
      NULL, a.advisedDelayMs, a.expectedAt, a.estimated, ${RETRIED_AT_SQL} - a.noticeAt, a.earlyByMs, NULL, NULL, a.httpStatus,
      a.code, a.message, NULL, NULL, NULL, NULL
    FROM "Attempt" a JOIN "Episode" ep ON ep.id = a.episodeId WHERE ep.threadId = ?
    UNION ALL
    SELECT e.at, 2, e.id, 'event', e.lastAt, NULL, e.id, e.type, e.nativeType, e.format, e.kind, NULL, e.attempt,
      e.maxAttempts, e.delayMs, NULL, NULL, NULL, NULL, NULL, NULL, NULL, e.httpStatus, e.code, e.message, e.count, e.late,
      e.receivedAt, e.raw
    FROM "Event" e WHERE e.threadId = ?
  ) WHERE (at, _rank, _key) > (?, ?, ?) ORDER BY at, _rank, _key LIMIT ?`;

export function timelinePages(key: number, sql: Sql = db().sql, pageSize = PAGE_SIZE): AsyncGenerator<ExportRow[]> {
  return keysetPages(
    [Number.MIN_SAFE_INTEGER, 0, 0],
    (cursor) => serialized(() => statement(TIMELINE, sql).all(key, key, key, ...cursor, pageSize) as Record<string, unknown>[]),
    (last) => [last.at as number, last._rank as number, last._key as number],
    pageSize,
  );
}

export const { threadExportRow } = onEitherStore({ threadExportRow: threadExportRowOnSqlite }, { threadExportRow: postgres.threadExportRow });
