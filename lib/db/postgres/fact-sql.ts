import { GAP_BOUNDS_MS } from "@/lib/insights/gaps";
import type { FactFilter } from "@/lib/insights/range";
import type { Clause } from "../thread-filter";
import { inList, recordFilterSql, viewStatusSql } from "./thread-filter";
import { msFromTimestamp } from "./time";

/**
 * lib/db/fact-sql.ts and thread-projection.ts on PostgreSQL: the same facts, rules and columns.
 * Durations are computed on epoch ms (BIGINT) as on SQLite, so a wait is the same number on both.
 */

export function factFilterSql(filter: FactFilter, kindColumn: string, now: number): { kind: Clause; thread: Clause } {
  const { kind, ...threadFilter } = filter;
  return {
    kind: kind?.length ? { sql: inList(`coalesce(${kindColumn}, 'other')`), params: [kind] } : { sql: "TRUE", params: [] },
    thread: recordFilterSql(threadFilter, now),
  };
}

export function gapBinSql(expression: string): string {
  return `CASE ${GAP_BOUNDS_MS.map((bound, i) => `WHEN ${expression} <= ${bound} THEN ${i}`).join(" ")} ELSE ${GAP_BOUNDS_MS.length} END`;
}

/** When a retry evidently happened (epoch ms): its reported start, or else the next notice of its episode. */
export const RETRIED_AT_SQL = `coalesce(${msFromTimestamp(`a."startedAt"`)},
  (SELECT ${msFromTimestamp(`min(b."noticeAt")`)} FROM "Attempt" b WHERE b."episodeId" = a."episodeId" AND b.n > a.n))`;

/** How long a retry waited (ms), until `horizon` (an epoch-ms expression) at most; never negative. */
export function waitMsSql(horizon: string): string {
  return `GREATEST(0, LEAST(coalesce(${RETRIED_AT_SQL}, ${msFromTimestamp(`ep."endedAt"`)}, ${horizon}), ${horizon}) - ${msFromTimestamp(`a."noticeAt"`)})`;
}

export const THREAD_LABELS_SQL = `coalesce(t.provider, 'unknown') AS provider, coalesce(t.model, 'unknown') AS model, coalesce(t.agent, 'unknown') AS agent`;

const ms = (column: string, alias: string) => `${msFromTimestamp(`t."${column}"`)} AS "${alias}"`;

/** A thread row as the SQL readers project it (one `?`: now). */
export const THREAD_SELECT = `SELECT t.id AS _sort, t.id AS _key, t."externalId" AS "threadId", t."sourceId", s.name AS source, t.title, t.agent,
    t.provider, t.model, t."parentExternalId" AS "parentThreadId", ${viewStatusSql()} AS status, t."turnId", t."retryKind",
    t."retryAttempt", t."retryMaxAttempts", ${ms("nextAttemptAt", "nextAttemptAt")}, t."nextAttemptEstimated", ${ms("deadlineAt", "deadlineAt")},
    ${ms("resetAt", "resetAt")}, t."advisedDelayMs", t.policy, t."lastErrorKind", t."lastErrorHttpStatus", t."lastErrorCode", t."lastErrorMessage",
    ${ms("createdAt", "createdAt")}, ${ms("updatedAt", "updatedAt")}, ${ms("lastEventAt", "lastEventAt")}
  FROM "Thread" t JOIN "Source" s ON s.id = t."sourceId"`;
