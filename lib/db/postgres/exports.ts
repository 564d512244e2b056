import type { ExportQuery } from "@/lib/insights/range";
import type { ExportKind, ExportRow } from "@/lib/insights/stream";
import type { AuditFilter } from "../records/audit";
import { keysetPages, PAGE_SIZE, present, type ExportPages, type PagedQuery } from "../records/exports";
import { AUDIT_SELECT, auditWhere } from "./audit-read";
import { factFilterSql, RETRIED_AT_SQL, THREAD_SELECT, waitMsSql } from "./fact-sql";
import { at, ms, rowsOf } from "./sql";
import { recordFilterSql } from "./thread-filter";
import { msFromTimestamp } from "./time";

/**
 * lib/db/exports.ts on PostgreSQL: the same rows in the same order, read in the same keyset pages
 * (one short query each on the pool, nothing held open between pages). Times are selected as
 * epoch ms so records/exports.ts presents both stores' rows alike; the keyset compares the
 * TIMESTAMP(3) columns with the cursor's ms, exact to the millisecond.
 */

function pagedQuery(kind: ExportKind, query: ExportQuery, now: number): PagedQuery {
  const { range, filter } = query;
  if (kind === "threads") {
    const where = recordFilterSql(filter, now);
    const active = range ? `EXISTS (SELECT 1 FROM "Event" e WHERE e."threadId" = t.id AND e.at >= ${at()} AND e.at < ${at()}) AND` : "";
    return {
      text: `${THREAD_SELECT} WHERE (t.id, t.id) > (?::bigint, ?::bigint) AND ${active} ${where.sql} ORDER BY t.id LIMIT ?`,
      before: [now],
      after: [...(range ? [range.from, range.to] : []), ...where.params],
    };
  }
  const fact = factFilterSql(filter, "ep.kind", now);
  const where = { sql: `${fact.kind.sql} AND ${fact.thread.sql}`, params: [...fact.kind.params, ...fact.thread.params] };
  const horizon = Math.min(range?.to ?? now, now);
  if (kind === "episodes") {
    const inRange = range ? `ep."startedAt" < ${at()} AND (ep."endedAt" IS NULL OR ep."endedAt" >= ${at()}) AND` : "";
    return {
      text: `SELECT ${msFromTimestamp(`ep."startedAt"`)} AS _sort, ep.id AS _key, t."externalId" AS "threadId", t."sourceId", t.agent, t.provider, t.model,
          ep.seq AS "episodeSeq", ep."turnId", ep.kind, ep.policy, ep."maxAttempts",
          (SELECT count(*) FROM "Attempt" a WHERE a."episodeId" = ep.id) AS attempts,
          ${ms(`ep."startedAt"`)}, ${ms(`ep."endedAt"`)}, ep.outcome, ep."outcomeCode", ep."outcomeReason", ${ms(`ep."resetAt"`)},
          (SELECT (coalesce(sum(${waitMsSql("?::bigint")}), 0) + CASE WHEN count(*) = 0 THEN coalesce(ep."reportedRetryMs", 0) ELSE 0 END)::bigint
            FROM "Attempt" a WHERE a."episodeId" = ep.id) AS "timeLostMs",
          ep."attemptsMade", ep."reportedRetryMs"
        FROM "Episode" ep JOIN "Thread" t ON t.id = ep."threadId"
        WHERE (ep."startedAt", ep.id) > (${at()}, ?::int) AND ${inRange} ${where.sql} ORDER BY ep."startedAt", ep.id LIMIT ?`,
      before: [horizon, horizon],
      after: [...(range ? [range.to, range.from] : []), ...where.params],
    };
  }
  const inRange = range ? `a."noticeAt" >= ${at()} AND a."noticeAt" < ${at()} AND` : "";
  return {
    text: `SELECT ${msFromTimestamp(`a."noticeAt"`)} AS _sort, a.id AS _key, t."externalId" AS "threadId", t."sourceId", t.agent, t.provider, t.model,
        ep.seq AS "episodeSeq", ep.kind, ep.policy, a.n, ${ms(`a."noticeAt"`)}, a."advisedDelayMs", ${ms(`a."expectedAt"`)}, a.estimated,
        ${ms(`a."deadlineAt"`)}, ${ms(`a."startedAt"`)}, ${RETRIED_AT_SQL} AS "retriedAt", ${RETRIED_AT_SQL} - ${msFromTimestamp(`a."noticeAt"`)} AS "actualGapMs",
        a."earlyByMs", ${waitMsSql("?::bigint")} AS "waitMs", a."httpStatus", a.code, a.message
      FROM "Attempt" a JOIN "Episode" ep ON ep.id = a."episodeId" JOIN "Thread" t ON t.id = ep."threadId"
      WHERE (a."noticeAt", a.id) > (${at()}, ?::int) AND ${inRange} ${where.sql} ORDER BY a."noticeAt", a.id LIMIT ?`,
    before: [horizon, horizon],
    after: [...(range ? [range.from, range.to] : []), ...where.params],
  };
}

// The smallest cursor: before every stored time (TIMESTAMP(3) reaches back to 4713 BC; this is 1677).
const FIRST = -9_223_372_036_854;

function pagesOf({ text, before, after }: PagedQuery, pageSize: number): AsyncGenerator<ExportRow[]> {
  return keysetPages(
    [FIRST, 0],
    (cursor) => rowsOf<Record<string, unknown>>(text, [...before, ...cursor, ...after, pageSize]),
    (last) => [last._sort as number, last._key as number],
    pageSize,
  );
}

export function exportPages(kind: ExportKind, query: ExportQuery, now: number, pageSize = PAGE_SIZE): AsyncGenerator<ExportRow[]> {
  return pagesOf(pagedQuery(kind, query, now), pageSize);
}

export function auditExportPages(filter: AuditFilter, pageSize = PAGE_SIZE): AsyncGenerator<ExportRow[]> {
  const where = auditWhere(filter);
  const text = `SELECT ${msFromTimestamp("at")} AS _sort, ${AUDIT_SELECT.replace(/^id, /, "id AS _key, ")} FROM "AuditEntry"
    WHERE (at, id) > (${at()}, ?::int) AND ${where.sql} ORDER BY at, id LIMIT ?`;
  return pagesOf({ text, before: [], after: where.params }, pageSize);
}

export async function threadExportRow(key: number, now: number): Promise<ExportRow | null> {
  const [row] = await rowsOf<Record<string, unknown>>(`${THREAD_SELECT} WHERE t.id = ?`, [now, key]);
  return row ? present(row) : null;
}

/** A thread's timeline (episodes, attempts, events in one time order), paged on (at, rank, key). */
const TIMELINE = `SELECT * FROM (
    SELECT ${msFromTimestamp(`ep."startedAt"`)} AS at, 0 AS _rank, ep.id AS _key, 'episode' AS record, ${msFromTimestamp(`ep."endedAt"`)} AS "endAt",
      ep.seq AS "episodeSeq", NULL::int AS "eventSeq", NULL AS type, NULL AS "nativeType", NULL AS format, ep.kind, ep.policy, NULL::int AS n,
      ep."maxAttempts", NULL::int AS "delayMs", NULL::int AS "advisedDelayMs", NULL::bigint AS "expectedAt", NULL::boolean AS estimated,
      NULL::bigint AS "actualGapMs", NULL::int AS "earlyByMs", ep.outcome, ep."outcomeCode", NULL::int AS "httpStatus", NULL AS code,
      ep."outcomeReason" AS message, NULL::int AS count, NULL::boolean AS late, NULL::bigint AS "receivedAt", NULL AS raw
    FROM "Episode" ep WHERE ep."threadId" = ?
    UNION ALL
    SELECT ${msFromTimestamp(`a."noticeAt"`)}, 1, a.id, 'attempt', ${msFromTimestamp(`a."startedAt"`)}, ep.seq, NULL, NULL, NULL, NULL, ep.kind,
      ep.policy, a.n, NULL, NULL, a."advisedDelayMs", ${msFromTimestamp(`a."expectedAt"`)}, a.estimated,
      ${RETRIED_AT_SQL} - ${msFromTimestamp(`a."noticeAt"`)}, a."earlyByMs", NULL, NULL, a."httpStatus", a.code, a.message, NULL, NULL, NULL, NULL
    FROM "Attempt" a JOIN "Episode" ep ON ep.id = a."episodeId" WHERE ep."threadId" = ?
    UNION ALL
    SELECT ${msFromTimestamp("e.at")}, 2, e.id, 'event', ${msFromTimestamp(`e."lastAt"`)}, NULL, e.id, e.type, e."nativeType", e.format, e.kind,
      NULL, e.attempt, e."maxAttempts", e."delayMs", NULL, NULL, NULL, NULL, NULL, NULL, NULL, e."httpStatus", e.code, e.message, e.count,
      e.late, ${msFromTimestamp(`e."receivedAt"`)}, e.raw
    FROM "Event" e WHERE e."threadId" = ?
  ) timeline WHERE (at, _rank, _key) > (?::bigint, ?::int, ?::bigint) ORDER BY at, _rank, _key LIMIT ?`;

export function timelinePages(key: number, pageSize = PAGE_SIZE): AsyncGenerator<ExportRow[]> {
  return keysetPages(
    [FIRST, 0, 0],
    (cursor) => rowsOf<Record<string, unknown>>(TIMELINE, [key, key, key, ...cursor, pageSize]),
    (last) => [last.at as number, last._rank as number, last._key as number],
    pageSize,
  );
}

export const pages: ExportPages = { exportPages, auditExportPages, timelinePages };
