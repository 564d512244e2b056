import type pg from "pg";
import type { InsightsQuery } from "@/lib/insights/range";
import type { InsightsData } from "@/lib/insights/types";
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
} from "../records/insights";
import { HOUR_MS } from "../records/rollups";
import type { ThreadProjection } from "../records/threads";
import { factFilterSql, gapBinSql, RETRIED_AT_SQL, THREAD_LABELS_SQL, THREAD_SELECT, waitMsSql } from "./fact-sql";
import { at, rowsOf, snapshotRead } from "./sql";
import { POSTGRES_FILTER } from "./thread-filter";
import { msFromTimestamp } from "./time";

/**
 * lib/db/insights.ts on PostgreSQL, with the same plan on one REPEATABLE READ snapshot: the
 * whole minutes and hours of a range from the rollups (lib/db/rollups.ts keeps them exact), the
 * partial minutes at its edges and any filter the rollups cannot answer from the raw facts, both
 * aggregated in the database and assembled by records/insights.ts. Grouped rows come in SQLite's
 * order (keys in byte order), so ties resolve alike. Sums are cast back to BIGINT (PostgreSQL sums
 * integers as NUMERIC, which pg reads as text).
 */

interface Scope {
  query: InsightsQuery;
  now: number;
  db: pg.ClientBase;
}

const THREAD_JOIN = (on: string) => `JOIN "Thread" t ON t.id = ${on}`;
const bucketOf = (ms: string) => `(${ms} - (${ms} % ?::bigint))`;

const rollupParts = ({ query }: Scope) => rolledParts(query, POSTGRES_FILTER);

/** A rolled part's time condition on alias `r` (two `?`: from, to). */
const rolledTime = ({ rollup }: RolledPart) => `r.${rollup.time} >= ${at()} AND r.${rollup.time} < ${at()}`;

/** A chart's rows, piece by piece on the snapshot's one connection: rolled parts, and raw edges. */
async function combined<T>(scope: Scope, raw: (scope: Scope) => Promise<T[]>, rolled: (part: RolledPart) => Promise<T[]>): Promise<T[]> {
  const rows: T[] = [];
  for (const piece of rangePieces(scope.query.range, rollupParts(scope))) rows.push(...(await ("raw" in piece ? raw(within(scope, piece.raw)) : rolled(piece.part))));
  return rows;
}

/** Rows of one rolled-up fact per (bucket, series), the series being a rollup column. */
function rolledSeries({ query, db }: Scope, part: RolledPart, fact: string, series: string): Promise<SeriesRow[]> {
  return rowsOf<SeriesRow>(
    `SELECT ${bucketOf(msFromTimestamp(`r.${part.rollup.time}`))} AS bucket, r.${series} AS series, sum(n)::bigint AS count FROM "${part.rollup.table}" r
     WHERE fact = ? AND ${rolledTime(part)} AND ${part.where.sql}
     GROUP BY 1, 2 HAVING sum(n) <> 0 ORDER BY 1, r.${series} COLLATE "C"`,
    [query.range.bucketMs, fact, part.from, part.to, ...part.where.params],
    db,
  );
}

function rawNoticeRows({ query, now, db }: Scope): Promise<SeriesRow[]> {
  const { from, to, bucketMs } = query.range;
  const notice = factFilterSql(query.filter, "e.kind", now);
  return rowsOf<SeriesRow>(
    `SELECT ${bucketOf(msFromTimestamp("e.at"))} AS bucket, ${SPLIT_COLUMNS[query.split]} AS series, count(*) AS count
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

function rawOutcomeRows(scope: Scope): Promise<SeriesRow[]> {
  const { from, to, bucketMs } = scope.query.range;
  const episode = episodeScope(scope);
  return rowsOf<SeriesRow>(
    `SELECT ${bucketOf(msFromTimestamp(`ep."endedAt"`))} AS bucket, ep.outcome AS series, count(*) AS count
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

/** Attempts and their evident retry time, in epoch ms, for the raw readers of waits and gaps (alias it `f`). */
const ATTEMPT_FACTS = `SELECT ep."threadId", ${msFromTimestamp(`ep."endedAt"`)} AS "endedAt", ${msFromTimestamp(`a."noticeAt"`)} AS "noticeAt",
    a."advisedDelayMs", a."earlyByMs", ${RETRIED_AT_SQL} AS "retriedAt"
  FROM "Attempt" a JOIN "Episode" ep ON ep.id = a."episodeId"`;

function rawGapBinRows(scope: Scope): Promise<GapBinRow[]> {
  const { from, to } = scope.query.range;
  const attempt = factFilterSql(scope.query.filter, "ep.kind", scope.now);
  return rowsOf<GapBinRow>(
    `SELECT ${gapBinSql(`GREATEST(0, f."retriedAt" - f."noticeAt")`)} AS "actualBin",
       CASE WHEN f."advisedDelayMs" IS NULL THEN NULL ELSE ${gapBinSql(`f."advisedDelayMs"`)} END AS "advisedBin",
       count(*) AS count, count(*) FILTER (WHERE coalesce(f."earlyByMs", 0) > 0) AS early
     FROM (${ATTEMPT_FACTS} ${THREAD_JOIN(`ep."threadId"`)}
       WHERE a."noticeAt" >= ${at()} AND a."noticeAt" < ${at()} AND ${attempt.kind.sql} AND ${attempt.thread.sql}) f
     WHERE f."retriedAt" IS NOT NULL
     GROUP BY 1, 2 ORDER BY 1, 2`,
    [from, to, ...attempt.kind.params, ...attempt.thread.params],
    scope.db,
  );
}

const noticeRows = (scope: Scope) => combined(scope, rawNoticeRows, (part) => rolledSeries(scope, part, "notice", scope.query.split));
const outcomeRows = (scope: Scope) => combined(scope, rawOutcomeRows, (part) => rolledSeries(scope, part, "outcome", "label"));

/** Gap bins: the rollups keep the actual and the advised bins of the retries apart (a row has one or the other). */
const gapBinRows = (scope: Scope) =>
  combined(scope, rawGapBinRows, async (part) =>
    (
      await rowsOf<{ fact: string; bin: number; count: number; early: number }>(
        `SELECT fact, label::int AS bin, sum(n)::bigint AS count, sum(early)::bigint AS early FROM "${part.rollup.table}" r
         WHERE fact IN ('actual', 'advisedRetried') AND ${rolledTime(part)} AND ${part.where.sql}
         GROUP BY 1, 2 HAVING sum(n) <> 0 ORDER BY fact COLLATE "C", 2`,
        [part.from, part.to, ...part.where.params],
        scope.db,
      )
    ).map((row) => ({
      actualBin: row.fact === "actual" ? row.bin : null,
      advisedBin: row.fact === "advisedRetried" ? row.bin : null,
      count: row.count,
      early: row.fact === "actual" ? row.early : 0,
    })),
  );

/** SQL whose rows are WaitRow columns: per thread (raw facts, corrections, `threadWait`) or per label set (`attempt`). */
type WaitSource = { sql: string; params: unknown[] };

/**
 * Attempts whose wait a horizon (epoch ms `?`, three times) may cut: those of episodes open or
 * ended after it, those started after it, and those followed in their episode by a notice after it.
 */
const CUT_BY_HORIZON = `SELECT b.id FROM "Episode" o JOIN "Attempt" b ON b."episodeId" = o.id WHERE o."endedAt" IS NULL OR o."endedAt" > ${at()}
  UNION SELECT id FROM "Attempt" WHERE "startedAt" > ${at()}
  UNION SELECT b.id FROM "Attempt" later JOIN "Attempt" b ON b."episodeId" = later."episodeId" AND b.n < later.n WHERE later."noticeAt" > ${at()}`;

/** Per-thread `sums` over attempt `facts` (rows of ATTEMPT_FACTS, alias `f`), with the thread's labels, under the thread filter. */
function perThreadSource(scope: Scope, sums: { sql: string; params: unknown[] }, facts: { sql: string; params: unknown[] }): WaitSource {
  const attempt = factFilterSql(scope.query.filter, "ep.kind", scope.now);
  return {
    sql: `SELECT x."threadId", ${THREAD_LABELS_SQL}, x.attempts, x."waitMs", x.judged, x.early, x."earlyByMs"
       FROM (SELECT f."threadId", ${sums.sql} FROM (${facts.sql}) f GROUP BY f."threadId") x ${THREAD_JOIN(`x."threadId"`)} WHERE ${attempt.thread.sql}`,
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
        sql: `count(*) AS attempts, sum(GREATEST(0, LEAST(coalesce(f."retriedAt", f."endedAt", ?::bigint), ?::bigint) - f."noticeAt"))::bigint AS "waitMs",
          count(*) FILTER (WHERE f."advisedDelayMs" IS NOT NULL AND f."retriedAt" IS NOT NULL) AS judged,
          -- the engine records earlyByMs only for a retry that happened sooner than advised
          count(*) FILTER (WHERE f."earlyByMs" > 0) AS early, sum(CASE WHEN f."earlyByMs" > 0 THEN f."earlyByMs" END)::bigint AS "earlyByMs"`,
        params: [horizon, horizon],
      },
      // The thread filter here too, not only after the sums: PostgreSQL cannot push it through the GROUP BY.
      {
        sql: `${ATTEMPT_FACTS} ${THREAD_JOIN(`ep."threadId"`)} WHERE a."noticeAt" >= ${at()} AND a."noticeAt" < ${at()} AND ${attempt.kind.sql} AND ${attempt.thread.sql}`,
        params: [from, to, ...attempt.kind.params, ...attempt.thread.params],
      },
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
  const attempt = factFilterSql(scope.query.filter, "ep.kind", scope.now);
  const end = `coalesce(f."retriedAt", f."endedAt")`;
  const from = `FROM "${part.rollup.table}" r WHERE fact = '${perThread ? "threadWait" : "attempt"}' AND ${rolledTime(part)} AND ${part.where.sql}`;
  const rolled = perThread
    ? `SELECT r.label::int AS "threadId", '' AS provider, '' AS model, '' AS agent, sum(n)::bigint AS attempts, sum(ms)::bigint AS "waitMs",
         0::bigint AS judged, 0::bigint AS early, 0::bigint AS "earlyByMs" ${from} GROUP BY r.label`
    : `SELECT NULL::int AS "threadId", r.provider, r.model, r.agent, sum(n)::bigint AS attempts, sum(ms)::bigint AS "waitMs", sum(judged)::bigint AS judged,
         sum(early)::bigint AS early, sum("earlyMs")::bigint AS "earlyByMs" ${from} GROUP BY r.provider, r.model, r.agent`;
  return [
    { sql: rolled, params: [part.from, part.to, ...part.where.params] },
    perThreadSource(
      scope,
      {
        sql: `0::bigint AS attempts, sum(GREATEST(0, LEAST(coalesce(${end}, ?::bigint), ?::bigint) - f."noticeAt") - coalesce(GREATEST(0, ${end} - f."noticeAt"), 0))::bigint AS "waitMs",
          0::bigint AS judged, 0::bigint AS early, 0::bigint AS "earlyByMs"`,
        params: [horizon, horizon],
      },
      {
        sql: `SELECT * FROM (${ATTEMPT_FACTS} WHERE a."noticeAt" >= ${at()} AND a."noticeAt" < ${at()} AND ${attempt.kind.sql} AND a.id IN (${CUT_BY_HORIZON})) f
          WHERE ${end} IS NULL OR ${end} > ?::bigint`,
        params: [part.from, part.to, ...attempt.kind.params, horizon, horizon, horizon, horizon],
      },
    ),
  ];
}

function waitRows(scope: Scope, perThread: boolean, select: (union: string) => string): Promise<WaitRow[]> {
  const horizon = Math.min(scope.query.range.to, scope.now);
  const parts = rollupParts(scope);
  const sources = rangePieces(scope.query.range, parts).flatMap((piece) =>
    "raw" in piece ? rawWaitSource(within(scope, piece.raw), horizon) : rolledWaitSources(scope, piece.part, horizon, perThread),
  );
  return rowsOf<WaitRow>(select(sources.map((source) => source.sql).join("\n UNION ALL ")), sources.flatMap((source) => source.params), scope.db);
}

/** The top threads by summing every thread's waits in the range. */
function summedTopThreads(scope: Scope): Promise<ThreadWait[]> {
  return waitRows(
    scope,
    true,
    (union) => `SELECT "threadId", sum(attempts)::bigint AS attempts, sum("waitMs")::bigint AS "waitMs" FROM (${union}) u
       GROUP BY "threadId" HAVING sum(attempts) > 0 ORDER BY "waitMs" DESC, "threadId" LIMIT ${TOP_THREADS}`,
  ) as Promise<ThreadWait[]>;
}

/** How many threads the bounded search examines before it sums every thread instead, and how many at a time. */
const BOUNDED_CANDIDATES = 64;
const CANDIDATE_BATCH = 32;

/**
 * The top threads by bounds (lib/db/insights.ts says why they are exact): the threads with a
 * wait the horizon cuts, then the others by their finished waits of all time (ThreadWaitTotal),
 * largest first, summed exactly from their raw attempts until the tenth best beats the next
 * total; null after BOUNDED_CANDIDATES, or for ranges bucketed by minutes.
 */
async function boundedTopThreads(scope: Scope): Promise<ThreadWait[] | null> {
  const { query, now, db } = scope;
  const { from, to, bucketMs } = query.range;
  if (bucketMs < HOUR_MS) return null;
  const horizon = Math.min(to, now);
  const attempt = factFilterSql(query.filter, "ep.kind", now);
  const exact = new Map<number, ThreadWait>();
  const sumExactly = async (threadIds: number[]) => {
    const rows = await rowsOf<ThreadWait>(
      `SELECT ep."threadId", count(*) AS attempts, sum(${waitMsSql("?::bigint")})::bigint AS "waitMs"
       FROM "Episode" ep JOIN "Attempt" a ON a."episodeId" = ep.id
       WHERE ep."threadId" = ANY(?::int[]) AND a."noticeAt" >= ${at()} AND a."noticeAt" < ${at()} AND ${attempt.kind.sql}
       GROUP BY ep."threadId"`,
      [horizon, horizon, threadIds, from, to, ...attempt.kind.params],
      db,
    );
    for (const row of rows) exact.set(row.threadId, row);
  };
  const cut = await rowsOf<{ threadId: number }>(
    `SELECT DISTINCT ep."threadId" FROM "Attempt" a JOIN "Episode" ep ON ep.id = a."episodeId" ${THREAD_JOIN(`ep."threadId"`)}
     WHERE a."noticeAt" >= ${at()} AND a."noticeAt" < ${at()} AND a.id IN (${CUT_BY_HORIZON}) AND ${attempt.thread.sql}`,
    [from, to, horizon, horizon, horizon, ...attempt.thread.params],
    db,
  );
  await sumExactly(cut.map((row) => row.threadId));
  let after = [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER];
  for (let examined = 0; ; examined += CANDIDATE_BATCH) {
    const batch = await rowsOf<{ threadId: number; ms: number }>(
      `SELECT w."threadId", w.ms FROM "ThreadWaitTotal" w ${THREAD_JOIN(`w."threadId"`)}
       WHERE (w.ms, w."threadId") < (?::bigint, ?::bigint) AND ${attempt.thread.sql} ORDER BY w.ms DESC, w."threadId" DESC LIMIT ${CANDIDATE_BATCH}`,
      [...after, ...attempt.thread.params],
      db,
    );
    const top = [...exact.values()].sort(byWait).slice(0, TOP_THREADS);
    if (!batch.length || (top.length === TOP_THREADS && top[TOP_THREADS - 1].waitMs > batch[0].ms)) return top;
    if (examined >= BOUNDED_CANDIDATES) return null;
    await sumExactly(batch.map((row) => row.threadId));
    after = [batch[batch.length - 1].ms, batch[batch.length - 1].threadId];
  }
}

/**
 * Every figure of waits: time lost per provider and model, early retries per agent, and the
 * threads that lost the most. From the rollups, the first two come per label set and the top
 * threads by bounds; from the raw facts alone, all three come from one row per thread.
 */
async function waits(scope: Scope): Promise<{ lost: WaitRow[]; agents: WaitRow[]; top: ThreadWait[] }> {
  if (!rollupParts(scope).length) {
    const perThread = await waitRows(scope, true, (union) => `SELECT * FROM (${union}) u ORDER BY "threadId"`);
    return { ...byLabels(perThread), top: topOf(perThread as ThreadWait[]) };
  }
  const labelled = await waitRows(
    scope,
    false,
    (union) => `SELECT provider, model, agent, sum(attempts)::bigint AS attempts, sum("waitMs")::bigint AS "waitMs", sum(judged)::bigint AS judged,
       sum(early)::bigint AS early, sum("earlyByMs")::bigint AS "earlyByMs" FROM (${union}) u
       GROUP BY provider, model, agent ORDER BY provider COLLATE "C", model COLLATE "C", agent COLLATE "C"`,
  );
  return { ...byLabels(labelled), top: (await boundedTopThreads(scope)) ?? (await summedTopThreads(scope)) };
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
    const { lost, agents, top } = await waits(scope);
    return toInsights(query, { notices, outcomes, gapBins, openEpisodes, lost, agents, top, threads: await threadsByKey(scope, top.map((row) => row.threadId)) });
  });
}
