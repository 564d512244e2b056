import type { InsightsQuery } from "@/lib/insights/range";
import type { InsightsData } from "@/lib/insights/types";
import { db, serialized } from "./client";
import { factFilterSql, gapBinSql, RETRIED_AT_SQL, THREAD_LABELS_SQL } from "./fact-sql";
import { HOUR_MS } from "./rollups";
import {
  byLabels,
  byWait,
  rangePieces,
  rolledParts,
  SPLIT_COLUMNS,
  TOP_THREADS,
  topOf,
  toInsights,
  within,
  type GapBinRow,
  type RolledPart,
  type SeriesRow,
  type ThreadWait,
  type WaitRow,
} from "./records/insights";
import { pluck, statement, type Sql } from "./statement";
import { SQLITE_FILTER } from "./thread-filter";
import { THREAD_SELECT, type ThreadProjection } from "./thread-projection";

/**
 * The insights page's numbers. Every number is aggregated in SQLite (GROUP BY over time buckets
 * and labels); only grouped rows reach JavaScript, never events. One named query per chart, and
 * one assembler, insights(), that turns their rows into InsightsData.
 *
 * Cost: each chart is one range scan of an index on the fact's own time —
 * Event(type, at, kind, threadId) (covering: no event row is read) for notices,
 * Attempt(noticeAt) for waits and gaps, Episode(endedAt) for outcomes — plus primary-key
 * lookups (an attempt's episode; a fact's thread, since a thread joined to another path's thread
 * counts there, not on its own: thread-filter.ts). A query is O(log N + k) for the k facts inside its range, whatever lies
 * outside it. Progress deltas are not facts of these charts (and ingestion folds them anyway).
 *
 * When the filter names only what rollups are keyed by (fact kind, provider, model, source),
 * notices, outcomes, gap bins and waits (time lost and early retries per label set, the top
 * threads from the per-thread `threadWait` fact or by bounds) are read from the rollups
 * (lib/db/rollups.ts): the hour table for the whole hours of a range bucketed by hours, the minute
 * table for the other whole minutes, the raw facts for the partial minutes at either end. Every
 * other filter reads the raw facts. A wait the range's horizon cuts is corrected from its raw attempt.
 */

const THREAD_JOIN = (on: string) => `JOIN "Thread" t ON t.id = ${on}`;


interface Scope {
  query: InsightsQuery;
  now: number;
  sql: Sql;
}

const rollupParts = ({ query }: Scope) => rolledParts(query, SQLITE_FILTER);

/**
 * A chart's rows: from the rollups over the whole minutes and hours and from `raw` over the
 * rest, or all from `raw` when the rollups cannot answer the filter.
 */
function combined<T>(scope: Scope, raw: (scope: Scope) => T[], rolled: (part: RolledPart) => T[]): T[] {
  return rangePieces(scope.query.range, rollupParts(scope)).flatMap((piece) => ("raw" in piece ? raw(within(scope, piece.raw)) : rolled(piece.part)));
}

/** Rows of one rolled-up fact per (bucket, series), the series being a rollup column. */
function rolledSeries({ query, sql }: Scope, part: RolledPart, fact: string, series: string): SeriesRow[] {
  const { bucketMs } = query.range;
  const { table, time } = part.rollup;
  return statement(
    `SELECT ${time} - (${time} % ?) AS bucket, r.${series} AS series, sum(n) AS count FROM "${table}" r
     WHERE fact = ? AND ${time} >= ? AND ${time} < ? AND ${part.where.sql}
     GROUP BY bucket, series HAVING sum(n) <> 0`,
    sql,
  ).all(bucketMs, fact, part.from, part.to, ...part.where.params) as SeriesRow[];
}

/** Retry notices per (bucket, series); the covering index answers alone unless a thread attribute is needed. */
function rawNoticeRows({ query, now, sql }: Scope): SeriesRow[] {
  const { from, to, bucketMs } = query.range;
  const notice = factFilterSql(query.filter, "e.kind", now);
  return statement(
    `SELECT e.at - (e.at % ?) AS bucket, ${SPLIT_COLUMNS[query.split]} AS series, count(*) AS count
     FROM "Event" e ${THREAD_JOIN("e.threadId")}
     WHERE e.type = 'retry' AND e.at >= ? AND e.at < ? AND ${notice.kind.sql} AND ${notice.thread.sql}
     GROUP BY bucket, series`,
    sql,
  ).all(bucketMs, from, to, ...notice.kind.params, ...notice.thread.params) as SeriesRow[];
}

function episodeScope({ query, now }: Scope) {
  const episode = factFilterSql(query.filter, "ep.kind", now);
  return {
    join: THREAD_JOIN("ep.threadId"),
    where: `${episode.kind.sql} AND ${episode.thread.sql}`,
    params: [...episode.kind.params, ...episode.thread.params],
  };
}

/** Episode outcomes by the bucket of their end. */
function rawOutcomeRows(scope: Scope): SeriesRow[] {
  const { from, to, bucketMs } = scope.query.range;
  const episode = episodeScope(scope);
  return statement(
    `SELECT ep.endedAt - (ep.endedAt % ?) AS bucket, ep.outcome AS series, count(*) AS count
     FROM "Episode" ep ${episode.join}
     WHERE ep.endedAt >= ? AND ep.endedAt < ? AND ep.outcome IS NOT NULL AND ${episode.where}
     GROUP BY bucket, series`,
    scope.sql,
  ).all(bucketMs, from, to, ...episode.params) as SeriesRow[];
}

/** Episodes started in the range and still open at its end. */
function openEpisodeCount(scope: Scope): number {
  const { from, to } = scope.query.range;
  const episode = episodeScope(scope);
  return pluck(
    `SELECT count(*) FROM "Episode" ep ${episode.join}
     WHERE ep.startedAt >= ? AND ep.startedAt < ? AND (ep.endedAt IS NULL OR ep.endedAt >= ?) AND ${episode.where}`,
    scope.sql,
  ).get(from, to, to, ...episode.params) as number;
}

/** Advised delays and actual gaps of the retries that happened, both binned in one pass. */
function rawGapBinRows(scope: Scope): GapBinRow[] {
  const { from, to } = scope.query.range;
  const attempt = factFilterSql(scope.query.filter, "ep.kind", scope.now);
  return statement(
    `SELECT ${gapBinSql("max(0, retriedAt - noticeAt)")} AS actualBin,
       CASE WHEN advisedDelayMs IS NULL THEN NULL ELSE ${gapBinSql("advisedDelayMs")} END AS advisedBin,
       count(*) AS count, sum(coalesce(earlyByMs, 0) > 0) AS early
     FROM (
       SELECT a.noticeAt, a.advisedDelayMs, a.earlyByMs, ${RETRIED_AT_SQL} AS retriedAt
       FROM "Attempt" a JOIN "Episode" ep ON ep.id = a.episodeId ${THREAD_JOIN("ep.threadId")}
       WHERE a.noticeAt >= ? AND a.noticeAt < ? AND ${attempt.kind.sql} AND ${attempt.thread.sql})
     WHERE retriedAt IS NOT NULL
     GROUP BY actualBin, advisedBin`,
    scope.sql,
  ).all(from, to, ...attempt.kind.params, ...attempt.thread.params) as GapBinRow[];
}

const noticeRows = (scope: Scope) => combined(scope, rawNoticeRows, (part) => rolledSeries(scope, part, "notice", scope.query.split));
const outcomeRows = (scope: Scope) => combined(scope, rawOutcomeRows, (part) => rolledSeries(scope, part, "outcome", "label"));


/** Gap bins: the rollups keep the actual and the advised bins of the retries apart (a row has one or the other). */
const gapBinRows = (scope: Scope) =>
  combined(scope, rawGapBinRows, (part) =>
    (
      statement(
        `SELECT fact, CAST(label AS INTEGER) AS bin, sum(n) AS count, sum(early) AS early FROM "${part.rollup.table}" r
         WHERE fact IN ('actual', 'advisedRetried') AND ${part.rollup.time} >= ? AND ${part.rollup.time} < ? AND ${part.where.sql}
         GROUP BY fact, bin HAVING sum(n) <> 0`,
        scope.sql,
      ).all(part.from, part.to, ...part.where.params) as { fact: string; bin: number; count: number; early: number }[]
    ).map((row) => ({
      actualBin: row.fact === "actual" ? row.bin : null,
      advisedBin: row.fact === "advisedRetried" ? row.bin : null,
      count: row.count,
      early: row.fact === "actual" ? row.early : 0,
    })),
  );

/** SQL whose rows are WaitRow columns: per thread (raw facts, corrections, `threadWait`) or per label set (`attempt`). */
type WaitSource = { sql: string; params: unknown[] };

/** Attempts and their evident retry time, for the raw readers of waits. */
const ATTEMPT_FACTS = `SELECT ep.threadId, ep.endedAt, a.noticeAt, a.advisedDelayMs, a.earlyByMs, ${RETRIED_AT_SQL} AS retriedAt
  FROM "Attempt" a JOIN "Episode" ep ON ep.id = a.episodeId`;

/**
 * Attempts whose wait a horizon (?, four times) may cut: those of episodes open or ended after
 * it, those started after it, and those followed in their episode by a notice after it. Found
 * through indexes; few unless the range ends in the past.
 */
const CUT_BY_HORIZON = `SELECT b.id FROM "Episode" o JOIN "Attempt" b ON b.episodeId = o.id WHERE o.endedAt IS NULL OR o.endedAt > ?
  UNION SELECT id FROM "Attempt" WHERE startedAt > ?
  UNION SELECT b.id FROM "Attempt" later JOIN "Attempt" b ON b.episodeId = later.episodeId AND b.n < later.n WHERE later.noticeAt > ?`;

/** Per-thread `sums` over attempt `facts` (rows of ATTEMPT_FACTS), with the thread's labels, under the thread filter. */
function perThreadSource(scope: Scope, sums: { sql: string; params: unknown[] }, facts: { sql: string; params: unknown[] }): WaitSource {
  const attempt = factFilterSql(scope.query.filter, "ep.kind", scope.now);
  return {
    sql: `SELECT x.threadId, ${THREAD_LABELS_SQL}, x.attempts, x.waitMs, x.judged, x.early, x.earlyByMs
       FROM (SELECT threadId, ${sums.sql} FROM (${facts.sql}) GROUP BY threadId) x ${THREAD_JOIN("x.threadId")} WHERE ${attempt.thread.sql}`,
    params: [...sums.params, ...facts.params, ...attempt.thread.params],
  };
}

/** Waits per thread from the raw attempts noticed in the scope's range, cut at `horizon`. */
function rawWaitSource(scope: Scope, horizon: number): WaitSource[] {
  const { from, to } = scope.query.range;
  const attempt = factFilterSql(scope.query.filter, "ep.kind", scope.now);
  return [
    perThreadSource(
      scope,
      {
        sql: `count(*) AS attempts, sum(max(0, min(coalesce(retriedAt, endedAt, ?), ?) - noticeAt)) AS waitMs,
          sum(advisedDelayMs IS NOT NULL AND retriedAt IS NOT NULL) AS judged,
          -- the engine records earlyByMs only for a retry that happened sooner than advised
          sum(earlyByMs > 0) AS early, sum(CASE WHEN earlyByMs > 0 THEN earlyByMs END) AS earlyByMs`,
        params: [horizon, horizon],
      },
      { sql: `${ATTEMPT_FACTS} WHERE a.noticeAt >= ? AND a.noticeAt < ? AND ${attempt.kind.sql}`, params: [from, to, ...attempt.kind.params] },
    ),
  ];
}

/**
 * Waits from the rollups over one part, per label set (`attempt`) or per thread (`threadWait`,
 * whose label is the thread's key), plus the correction of the waits the horizon cuts: the
 * rollups hold each finished wait whole and an open one as nothing, while a range counts a wait
 * only up to its horizon.
 */
function rolledWaitSources(scope: Scope, part: RolledPart, horizon: number, perThread: boolean): WaitSource[] {
  const { table, time } = part.rollup;
  const attempt = factFilterSql(scope.query.filter, "ep.kind", scope.now);
  const end = "coalesce(retriedAt, endedAt)";
  const rolled = perThread
    ? `SELECT CAST(r.label AS INTEGER) AS threadId, '' AS provider, '' AS model, '' AS agent, sum(n) AS attempts, sum(ms) AS waitMs,
         0 AS judged, 0 AS early, 0 AS earlyByMs
       FROM "${table}" r WHERE fact = 'threadWait' AND ${time} >= ? AND ${time} < ? AND ${part.where.sql} GROUP BY r.label`
    : `SELECT NULL AS threadId, r.provider, r.model, r.agent, sum(n) AS attempts, sum(ms) AS waitMs, sum(judged) AS judged,
         sum(early) AS early, sum(earlyMs) AS earlyByMs
       FROM "${table}" r WHERE fact = 'attempt' AND ${time} >= ? AND ${time} < ? AND ${part.where.sql} GROUP BY r.provider, r.model, r.agent`;
  return [
    { sql: rolled, params: [part.from, part.to, ...part.where.params] },
    perThreadSource(
      scope,
      {
        sql: `0 AS attempts, sum(max(0, min(coalesce(${end}, ?), ?) - noticeAt) - coalesce(max(0, ${end} - noticeAt), 0)) AS waitMs,
          0 AS judged, 0 AS early, 0 AS earlyByMs`,
        params: [horizon, horizon],
      },
      {
        sql: `SELECT * FROM (${ATTEMPT_FACTS} WHERE a.noticeAt >= ? AND a.noticeAt < ? AND ${attempt.kind.sql} AND a.id IN (${CUT_BY_HORIZON}))
          WHERE ${end} IS NULL OR ${end} > ?`,
        params: [part.from, part.to, ...attempt.kind.params, horizon, horizon, horizon, horizon],
      },
    ),
  ];
}

function waitRows(scope: Scope, perThread: boolean, select: (union: string) => string): WaitRow[] {
  const horizon = Math.min(scope.query.range.to, scope.now);
  const sources = combined(scope, (edge) => rawWaitSource(edge, horizon), (part) => rolledWaitSources(scope, part, horizon, perThread));
  return statement(select(sources.map((source) => source.sql).join("\n UNION ALL ")), scope.sql).all(
    ...sources.flatMap((source) => source.params),
  ) as WaitRow[];
}

/** The top threads by summing every thread's waits in the range. */
function summedTopThreads(scope: Scope): ThreadWait[] {
  return waitRows(
    scope,
    true,
    (union) => `SELECT threadId, sum(attempts) AS attempts, sum(waitMs) AS waitMs FROM (${union})
       GROUP BY threadId HAVING sum(attempts) > 0 ORDER BY waitMs DESC, threadId LIMIT ${TOP_THREADS}`,
  ) as ThreadWait[];
}

/** How many threads the bounded search examines before it sums every thread instead, and how many at a time. */
const BOUNDED_CANDIDATES = 64;
const CANDIDATE_BATCH = 32;

/**
 * The top threads by bounds: a thread's waits in any range are at most its finished waits of
 * all time (ThreadWaitTotal, lib/db/rollups.ts), unless a wait is still open at the horizon. So
 * the threads with such a wait, then the others by their total, largest first, are summed
 * exactly from their raw attempts until the tenth best beats the next total. A long range finds
 * them among the first few; when the totals do not tell (a range short next to the threads'
 * lives) it gives up after BOUNDED_CANDIDATES and returns null. Ranges bucketed by minutes are
 * short enough to sum outright.
 */
function boundedTopThreads(scope: Scope): ThreadWait[] | null {
  const { query, now, sql } = scope;
  const { from, to, bucketMs } = query.range;
  if (bucketMs < HOUR_MS) return null;
  const horizon = Math.min(to, now);
  const attempt = factFilterSql(query.filter, "ep.kind", now);
  const exact = new Map<number, ThreadWait>();
  const sumExactly = (threadIds: number[]) => {
    const rows = statement(
      `SELECT ep.threadId, count(*) AS attempts, sum(max(0, min(coalesce(${RETRIED_AT_SQL}, ep.endedAt, ?), ?) - a.noticeAt)) AS waitMs
       FROM json_each(?) j CROSS JOIN "Episode" ep ON ep.threadId = j.value CROSS JOIN "Attempt" a ON a.episodeId = ep.id
       WHERE a.noticeAt >= ? AND a.noticeAt < ? AND ${attempt.kind.sql}
       GROUP BY ep.threadId`,
      sql,
    ).all(horizon, horizon, JSON.stringify(threadIds), from, to, ...attempt.kind.params) as ThreadWait[];
    for (const row of rows) exact.set(row.threadId, row);
  };
  sumExactly(
    pluck(
      `SELECT DISTINCT ep.threadId FROM "Attempt" a JOIN "Episode" ep ON ep.id = a.episodeId ${THREAD_JOIN("ep.threadId")}
       WHERE a.noticeAt >= ? AND a.noticeAt < ? AND a.id IN (${CUT_BY_HORIZON}) AND ${attempt.thread.sql}`,
      sql,
    ).all(from, to, horizon, horizon, horizon, ...attempt.thread.params) as number[],
  );
  const candidates = statement(
    `SELECT w.threadId, w.ms FROM "ThreadWaitTotal" w ${THREAD_JOIN("w.threadId")}
     WHERE (w.ms, w.threadId) < (?, ?) AND ${attempt.thread.sql} ORDER BY w.ms DESC, w.threadId DESC LIMIT ${CANDIDATE_BATCH}`,
    sql,
  );
  let after = [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];
  for (let examined = 0; ; examined += CANDIDATE_BATCH) {
    const batch = candidates.all(...after, ...attempt.thread.params) as { threadId: number; ms: number }[];
    const top = [...exact.values()].sort(byWait).slice(0, TOP_THREADS);
    if (!batch.length || (top.length === TOP_THREADS && top[TOP_THREADS - 1].waitMs > batch[0].ms)) return top;
    if (examined >= BOUNDED_CANDIDATES) return null;
    sumExactly(batch.map((row) => row.threadId));
    after = [batch[batch.length - 1].ms, batch[batch.length - 1].threadId];
  }
}

/**
 * Every figure of waits: time lost per provider and model, early retries per agent, and the
 * threads that lost the most. From the rollups, the first two come per label set and the top
 * threads by bounds; from the raw facts alone, all three come from one row per thread.
 */
function waits(scope: Scope): { lost: WaitRow[]; agents: WaitRow[]; top: ThreadWait[] } {
  if (!rollupParts(scope).length) {
    const perThread = waitRows(scope, true, (union) => union);
    return { ...byLabels(perThread), top: topOf(perThread as ThreadWait[]) };
  }
  const labelled = waitRows(
    scope,
    false,
    (union) => `SELECT provider, model, agent, sum(attempts) AS attempts, sum(waitMs) AS waitMs, sum(judged) AS judged,
       sum(early) AS early, sum(earlyByMs) AS earlyByMs FROM (${union}) GROUP BY provider, model, agent`,
  );
  return { ...byLabels(labelled), top: boundedTopThreads(scope) ?? summedTopThreads(scope) };
}

/** The threads of the top list, as projected for every SQL reader. */
function threadsByKey({ now, sql }: Scope, keys: number[]): Map<number, ThreadProjection> {
  const rows = statement(`${THREAD_SELECT} WHERE t.id IN (SELECT value FROM json_each(?))`, sql).all(now, JSON.stringify(keys)) as ThreadProjection[];
  return new Map(rows.map((row) => [row._key, row]));
}

/** Every chart of the insights page, from the named queries above (records/insights.ts assembles them). */
function assemble(scope: Scope): InsightsData {
  const { lost, agents, top } = waits(scope);
  return toInsights(scope.query, {
    notices: noticeRows(scope),
    outcomes: outcomeRows(scope),
    gapBins: gapBinRows(scope),
    openEpisodes: openEpisodeCount(scope),
    lost,
    agents,
    top,
    threads: threadsByKey(scope, top.map((row) => row.threadId)),
  });
}

/** The insights of `query`, read at once (the read worker runs it; see reads.ts). */
export function readInsights(query: InsightsQuery, now: number, sql: Sql = db().sql): InsightsData {
  return assemble({ query, now, sql });
}

/** The same, queued with every other use of the connection. */
export function insights(query: InsightsQuery, now: number, sql: Sql = db().sql): Promise<InsightsData> {
  return serialized(() => readInsights(query, now, sql));
}
