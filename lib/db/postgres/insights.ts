import type pg from "pg";
import type { InsightsQuery } from "@/lib/insights/range";
import type { InsightsData } from "@/lib/insights/types";
import { byLabels, SPLIT_COLUMNS, topOf, toInsights, type GapBinRow, type SeriesRow, type ThreadWait, type WaitRow } from "../records/insights";
import type { ThreadProjection } from "../records/threads";
import { factFilterSql, gapBinSql, RETRIED_AT_SQL, THREAD_LABELS_SQL, THREAD_SELECT } from "./fact-sql";
import { at, rowsOf, snapshotRead } from "./sql";
import { msFromTimestamp } from "./time";

/**
 * lib/db/insights.ts on PostgreSQL: every chart from the raw facts, aggregated in the database
 * (GROUP BY over time buckets and labels) on one REPEATABLE READ snapshot, and assembled by
 * records/insights.ts as on SQLite. The rollups are SQLite's shortcut to the same numbers
 * (lib/db/rollups.test.ts proves them equal to the raw aggregation); here the raw facts answer,
 * through the same indexes on each fact's own time. Grouped rows come in SQLite's order (keys in
 * byte order), so ties resolve alike.
 */

interface Scope {
  query: InsightsQuery;
  now: number;
  db: pg.ClientBase;
}

const THREAD_JOIN = (on: string) => `JOIN "Thread" t ON t.id = ${on}`;
const bucketOf = (time: string) => `(${msFromTimestamp(time)} - (${msFromTimestamp(time)} % ?::bigint))`;

function noticeRows({ query, now, db }: Scope): Promise<SeriesRow[]> {
  const { from, to, bucketMs } = query.range;
  const notice = factFilterSql(query.filter, "e.kind", now);
  return rowsOf<SeriesRow>(
    `SELECT ${bucketOf("e.at")} AS bucket, ${SPLIT_COLUMNS[query.split]} AS series, count(*) AS count
     FROM "Event" e ${THREAD_JOIN(`e."threadId"`)}
     WHERE e.type = 'retry' AND e.at >= ${at()} AND e.at < ${at()} AND ${notice.kind.sql} AND ${notice.thread.sql}
     GROUP BY 1, 2 ORDER BY 1, ${SPLIT_COLUMNS[query.split]} COLLATE "C"`,
    [bucketMs, from, to, ...notice.kind.params, ...notice.thread.params],
    db,
  );
}

function episodeScope({ query, now }: Scope) {
  const episode = factFilterSql(query.filter, "ep.kind", now);
  return { join: THREAD_JOIN(`ep."threadId"`), where: `${episode.kind.sql} AND ${episode.thread.sql}`, params: [...episode.kind.params, ...episode.thread.params] };
}

function outcomeRows(scope: Scope): Promise<SeriesRow[]> {
  const { from, to, bucketMs } = scope.query.range;
  const episode = episodeScope(scope);
  return rowsOf<SeriesRow>(
    `SELECT ${bucketOf(`ep."endedAt"`)} AS bucket, ep.outcome AS series, count(*) AS count
     FROM "Episode" ep ${episode.join}
     WHERE ep."endedAt" >= ${at()} AND ep."endedAt" < ${at()} AND ep.outcome IS NOT NULL AND ${episode.where}
     GROUP BY 1, 2 ORDER BY 1, ep.outcome COLLATE "C"`,
    [bucketMs, from, to, ...episode.params],
    scope.db,
  );
}

async function openEpisodeCount(scope: Scope): Promise<number> {
  const { from, to } = scope.query.range;
  const episode = episodeScope(scope);
  const [row] = await rowsOf<{ n: number }>(
    `SELECT count(*) AS n FROM "Episode" ep ${episode.join}
     WHERE ep."startedAt" >= ${at()} AND ep."startedAt" < ${at()} AND (ep."endedAt" IS NULL OR ep."endedAt" >= ${at()}) AND ${episode.where}`,
    [from, to, to, ...episode.params],
    scope.db,
  );
  return row.n;
}

/** Attempts of the range with their evident retry time, in epoch ms. */
function attemptFacts(scope: Scope): { sql: string; params: unknown[] } {
  const { from, to } = scope.query.range;
  const attempt = factFilterSql(scope.query.filter, "ep.kind", scope.now);
  return {
    sql: `SELECT ep."threadId", ${msFromTimestamp(`ep."endedAt"`)} AS "endedAt", ${msFromTimestamp(`a."noticeAt"`)} AS "noticeAt", a."advisedDelayMs",
        a."earlyByMs", ${RETRIED_AT_SQL} AS "retriedAt"
      FROM "Attempt" a JOIN "Episode" ep ON ep.id = a."episodeId" ${THREAD_JOIN(`ep."threadId"`)}
      WHERE a."noticeAt" >= ${at()} AND a."noticeAt" < ${at()} AND ${attempt.kind.sql} AND ${attempt.thread.sql}`,
    params: [from, to, ...attempt.kind.params, ...attempt.thread.params],
  };
}

function gapBinRows(scope: Scope): Promise<GapBinRow[]> {
  const facts = attemptFacts(scope);
  return rowsOf<GapBinRow>(
    `SELECT ${gapBinSql(`GREATEST(0, f."retriedAt" - f."noticeAt")`)} AS "actualBin",
       CASE WHEN f."advisedDelayMs" IS NULL THEN NULL ELSE ${gapBinSql(`f."advisedDelayMs"`)} END AS "advisedBin",
       count(*) AS count, count(*) FILTER (WHERE coalesce(f."earlyByMs", 0) > 0) AS early
     FROM (${facts.sql}) f WHERE f."retriedAt" IS NOT NULL
     GROUP BY 1, 2 ORDER BY 1, 2`,
    facts.params,
    scope.db,
  );
}

/** Waits per thread of the attempts noticed in the range, cut at the range's horizon (its end, or now). */
function waitRows(scope: Scope): Promise<WaitRow[]> {
  const horizon = Math.min(scope.query.range.to, scope.now);
  const facts = attemptFacts(scope);
  return rowsOf<WaitRow>(
    `SELECT x."threadId", ${THREAD_LABELS_SQL}, x.attempts, x."waitMs", x.judged, x.early, x."earlyByMs"
     FROM (SELECT f."threadId", count(*) AS attempts,
         sum(GREATEST(0, LEAST(coalesce(f."retriedAt", f."endedAt", ?::bigint), ?::bigint) - f."noticeAt"))::bigint AS "waitMs",
         count(*) FILTER (WHERE f."advisedDelayMs" IS NOT NULL AND f."retriedAt" IS NOT NULL) AS judged,
         -- the engine records earlyByMs only for a retry that happened sooner than advised
         count(*) FILTER (WHERE f."earlyByMs" > 0) AS early, sum(CASE WHEN f."earlyByMs" > 0 THEN f."earlyByMs" END)::bigint AS "earlyByMs"
       FROM (${facts.sql}) f GROUP BY f."threadId") x ${THREAD_JOIN(`x."threadId"`)}
     ORDER BY x."threadId"`,
    [horizon, horizon, ...facts.params],
    scope.db,
  );
}

async function threadsByKey({ now, db }: Scope, keys: number[]): Promise<Map<number, ThreadProjection>> {
  if (keys.length === 0) return new Map();
  const rows = await rowsOf<ThreadProjection & { _key: number }>(`${THREAD_SELECT} WHERE t.id = ANY(?::int[])`, [now, keys], db);
  return new Map(rows.map((row) => [row._key, row]));
}

export function insights(query: InsightsQuery, now: number): Promise<InsightsData> {
  return snapshotRead(async (db) => {
    const scope = { query, now, db };
    // One connection answers one query at a time: these run in turn, on one snapshot.
    const notices = await noticeRows(scope);
    const outcomes = await outcomeRows(scope);
    const gapBins = await gapBinRows(scope);
    const openEpisodes = await openEpisodeCount(scope);
    const perThread = await waitRows(scope);
    const top = topOf(perThread as ThreadWait[]);
    return toInsights(query, { notices, outcomes, gapBins, openEpisodes, ...byLabels(perThread), top, threads: await threadsByKey(scope, top.map((row) => row.threadId)) });
  });
}
