import type { ExportQuery } from "@/lib/insights/range";
import type { ExportKind, ExportRow } from "@/lib/insights/stream";
import { auditWhere, type AuditFilter } from "./audit";
import { db, serialized } from "./client";
import { factFilterSql, RETRIED_AT_SQL, waitMsSql } from "./fact-sql";
import { statement, type Sql } from "./statement";
import { recordFilterSql } from "./thread-filter";
import { THREAD_SELECT } from "./thread-projection";

/**
 * Exports read in keyset pages (`WHERE (time, id) > last ORDER BY time, id LIMIT n`): each page is one short
 * query, nothing stays open between pages (the shared better-sqlite3 connection stays free for
 * ingestion), and memory holds one page whatever the export's size. A page is produced only
 * when the response stream asks for it. Rows arriving during an export may or may not appear.
 *
 * Column names are a documented contract (README "Exports"): add columns at the end, never
 * rename. Times are ISO-8601 UTC, durations integer milliseconds, empty values null.
 */

const PAGE_SIZE = 500;

export const EXPORT_COLUMNS = {
  threads: [
    "threadId", "sourceId", "source", "title", "agent", "provider", "model", "parentThreadId", "status", "turnId",
    "retryKind", "retryAttempt", "retryMaxAttempts", "nextAttemptAt", "nextAttemptEstimated", "deadlineAt", "resetAt",
    "advisedDelayMs", "policy", "lastErrorKind", "lastErrorHttpStatus", "lastErrorCode", "lastErrorMessage",
    "createdAt", "updatedAt", "lastEventAt",
  ],
  episodes: [
    "threadId", "sourceId", "agent", "provider", "model", "episodeSeq", "turnId", "kind", "policy", "maxAttempts",
    "attempts", "startedAt", "endedAt", "outcome", "outcomeCode", "outcomeReason", "resetAt", "timeLostMs",
  ],
  attempts: [
    "threadId", "sourceId", "agent", "provider", "model", "episodeSeq", "kind", "policy", "n", "noticeAt",
    "advisedDelayMs", "expectedAt", "estimated", "deadlineAt", "startedAt", "retriedAt", "actualGapMs", "earlyByMs",
    "waitMs", "httpStatus", "code", "message",
  ],
} as const satisfies Record<ExportKind, readonly string[]>;

export const TIMELINE_COLUMNS = [
  "record", "at", "endAt", "episodeSeq", "eventSeq", "type", "nativeType", "format", "kind", "policy", "n",
  "maxAttempts", "delayMs", "advisedDelayMs", "expectedAt", "estimated", "actualGapMs", "earlyByMs", "outcome",
  "outcomeCode", "httpStatus", "code", "message", "count", "late", "receivedAt", "raw",
] as const;

const TIME_COLUMNS = new Set([
  "nextAttemptAt", "deadlineAt", "resetAt", "createdAt", "updatedAt", "lastEventAt", "startedAt", "endedAt",
  "noticeAt", "expectedAt", "retriedAt", "at", "endAt", "receivedAt",
]);
const BOOLEAN_COLUMNS = new Set(["nextAttemptEstimated", "estimated", "late"]);

/** SQLite integers → ISO times and booleans; `raw` payloads back to JSON; internal keys dropped. */
function present(row: Record<string, unknown>): ExportRow {
  const out: ExportRow = {};
  for (const [column, value] of Object.entries(row)) {
    if (column.startsWith("_")) continue;
    if (value === null || value === undefined) out[column] = null;
    else if (TIME_COLUMNS.has(column)) out[column] = new Date(value as number).toISOString();
    else if (BOOLEAN_COLUMNS.has(column)) out[column] = value === 1 || value === true;
    else if (column === "raw") out[column] = JSON.parse(value as string) as unknown;
    else out[column] = value;
  }
  return out;
}

interface PagedQuery {
  text: string;
  /** Parameters before and after the keyset pair (_sort, _key). */
  before: unknown[];
  after: unknown[];
}

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
          (SELECT coalesce(sum(${waitMsSql("?")}), 0) FROM "Attempt" a WHERE a.episodeId = ep.id) AS timeLostMs
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
  return keysetPages(pagedQuery(kind, query, now), sql, pageSize);
}

export const AUDIT_COLUMNS = ["at", "actor", "action", "target", "reason", "result", "detail"] as const;

/** The audit log in time order, with the audit page's filter. */
export function auditExportPages(filter: AuditFilter, sql: Sql = db().sql, pageSize = PAGE_SIZE): AsyncGenerator<ExportRow[]> {
  const where = auditWhere(filter);
  const text = `SELECT at AS _sort, id AS _key, ${AUDIT_COLUMNS.join(", ")} FROM "AuditEntry"
    WHERE (at, id) > (?, ?) AND ${where.sql} ORDER BY at, id LIMIT ?`;
  return keysetPages({ text, before: [], after: where.params }, sql, pageSize);
}

async function* keysetPages({ text, before, after }: PagedQuery, sql: Sql, pageSize: number): AsyncGenerator<ExportRow[]> {
  let cursor: [number, number] = [Number.MIN_SAFE_INTEGER, 0];
  for (;;) {
    const rows = (await serialized(() => statement(text, sql).all(...before, ...cursor, ...after, pageSize))) as Record<string, unknown>[];
    if (rows.length === 0) return;
    const last = rows[rows.length - 1];
    cursor = [last._sort as number, last._key as number];
    yield rows.map(present);
    if (rows.length < pageSize) return;
  }
}

/** One thread as the first line / envelope of its timeline export. */
export async function threadExportRow(key: number, now: number, sql: Sql = db().sql): Promise<ExportRow | null> {
  const row = (await serialized(() => statement(`${THREAD_SELECT} WHERE t.id = ?`, sql).get(now, key))) as Record<string, unknown> | undefined;
  return row ? present(row) : null;
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

export async function* timelinePages(key: number, sql: Sql = db().sql, pageSize = PAGE_SIZE): AsyncGenerator<ExportRow[]> {
  let cursor: [number, number, number] = [Number.MIN_SAFE_INTEGER, 0, 0];
  for (;;) {
    const rows = (await serialized(() => statement(TIMELINE, sql).all(key, key, key, ...cursor, pageSize))) as Record<string, unknown>[];
    if (rows.length === 0) return;
    const last = rows[rows.length - 1];
    cursor = [last.at as number, last._rank as number, last._key as number];
    yield rows.map(present);
    if (rows.length < pageSize) return;
  }
}
