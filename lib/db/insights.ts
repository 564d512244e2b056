import type Database from "better-sqlite3";
import { bucketStarts, fillBuckets, pickSeries } from "@/lib/insights/buckets";
import { GAP_BOUNDS_MS, gapBinLabels } from "@/lib/insights/gaps";
import type { HistogramRow, LabelRow, MetricsSnapshot } from "@/lib/insights/metrics";
import type { FactFilter, InsightsQuery } from "@/lib/insights/range";
import { OUTCOMES, recoveryRatio, type InsightsData } from "@/lib/insights/types";
import { TROUBLE_KINDS } from "@/lib/threads/filter";
import { db } from "./client";
import { WAITING_STATUSES } from "@/lib/threads/statuses";
import { stalledSql, type ThreadFilter } from "./threads";

/**
 * Insights, metrics and the shared SQL thread filter. Every number is aggregated in SQLite
 * (GROUP BY over time buckets and labels); only grouped rows reach JavaScript, never events.
 *
 * Cost: each chart is one range scan of an index on the fact's own time —
 * Event(type, at, kind, threadId) (covering: no event row is read) for notices,
 * Attempt(noticeAt) for waits and gaps, Episode(endedAt) for outcomes — plus primary-key
 * lookups (an attempt's episode; a thread once per group, or per fact when a thread filter or
 * split needs it). A query is O(log N + k) for the k facts inside its range, whatever lies
 * outside it. The metrics snapshot has no range: O(all retry notices + episodes + attempts).
 * Progress deltas are not facts of these charts (and ingestion folds them anyway).
 */

type Sql = Database.Database;

export interface Clause {
  sql: string;
  params: unknown[];
}

const json = (values: readonly unknown[]) => JSON.stringify(values);
const inList = (column: string) => `${column} IN (SELECT value FROM json_each(?))`;

/**
 * ThreadFilter (lib/db/threads.ts threadWhere, the board's Prisma filter) as SQL on thread
 * alias `t`, for aggregations Prisma cannot express. Same semantics, including `stalled`
 * derived from the deadline; lib/db/insights.test.ts checks both select the same threads.
 * Time is left to the caller: insights and exports bound facts by their own time, not the
 * threads' updatedAt.
 */
export function threadFilterSql(filter: Omit<ThreadFilter, "from" | "to">, now: number, t = "t"): Clause {
  const parts: string[] = [];
  const params: unknown[] = [];
  if (filter.status?.length) {
    const ors = filter.status.map((status) => {
      if (status === "stalled") {
        params.push(now);
        return stalledSql(t);
      }
      if (WAITING_STATUSES.includes(status)) {
        params.push(status, now);
        return `(${t}.status = ? AND NOT coalesce(${t}.deadlineAt <= ?, 0))`;
      }
      params.push(status);
      return `${t}.status = ?`;
    });
    parts.push(`(${ors.join(" OR ")})`);
  }
  if (filter.kind?.length) {
    parts.push(`(${inList(`${t}.retryKind`)} OR ${inList(`${t}.lastErrorKind`)})`);
    params.push(json(filter.kind), json(filter.kind));
  }
  if (filter.provider?.length) {
    parts.push(inList(`${t}.provider`));
    params.push(json(filter.provider));
  }
  if (filter.model?.length) {
    parts.push(inList(`${t}.model`));
    params.push(json(filter.model));
  }
  if (filter.source?.length) {
    parts.push(`(${inList(`${t}.sourceId`)} OR ${t}.sourceId IN (SELECT id FROM "Source" WHERE ${inList("name")}))`);
    params.push(json(filter.source), json(filter.source));
  }
  if (filter.q) {
    // Prisma's `contains` on SQLite: LIKE '%q%' (ASCII case-insensitive), wildcards escaped.
    const pattern = `%${filter.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const columns = ["externalId", "title", "lastErrorMessage", "agent", "model"];
    parts.push(`(${columns.map((c) => `${t}.${c} LIKE ? ESCAPE '\\'`).join(" OR ")})`);
    params.push(...columns.map(() => pattern));
  }
  return { sql: parts.length ? parts.join(" AND ") : "1", params };
}

/**
 * Insights and exports of facts (notices, episodes, attempts): `kind` is the fact's own kind —
 * filtering kind=capacity shows capacity notices, not every notice of threads whose latest
 * trouble was capacity. Every other field filters the threads, as on the board. The two parts
 * are apart so a query joins the thread only when it must.
 */
export function factFilterSql(filter: FactFilter, kindColumn: string, now: number): { kind: Clause; thread: Clause } {
  const { kind, ...threadFilter } = filter;
  return {
    kind: kind?.length ? { sql: inList(`coalesce(${kindColumn}, 'other')`), params: [json(kind)] } : { sql: "1", params: [] },
    thread: threadFilterSql(threadFilter, now),
  };
}

/** The bin index of a millisecond expression: the first GAP_BOUNDS_MS bound it does not exceed, else the open bin. */
export function gapBinSql(expression: string): string {
  return `CASE ${GAP_BOUNDS_MS.map((bound, i) => `WHEN ${expression} <= ${bound} THEN ${i}`).join(" ")} ELSE ${GAP_BOUNDS_MS.length} END`;
}

/**
 * When a retry evidently happened: the attempt's reported start, or else the next notice of
 * its episode (the engine judges "early" the same way when a source reports no attempts).
 * coalesce() evaluates lazily, so the lookup runs only for attempts never reported started.
 */
export const RETRIED_AT_SQL = `coalesce(a.startedAt,
  (SELECT min(b.noticeAt) FROM "Attempt" b WHERE b.episodeId = a.episodeId AND b.n > a.n))`;

/**
 * How long a retry waited: from its notice until it happened, or else until its episode
 * ended; a wait still open runs until `horizon` (the range end, or now). Never negative.
 */
export function waitMsSql(horizon: string): string {
  return `max(0, min(coalesce(${RETRIED_AT_SQL}, ep.endedAt, ${horizon}), ${horizon}) - a.noticeAt)`;
}

const TOP_THREADS = 10;
const NOTICE_SERIES_LIMIT = 8;
const SPLIT_COLUMNS = {
  kind: "coalesce(e.kind, 'other')",
  provider: "coalesce(t.provider, 'unknown')",
  model: "coalesce(t.model, 'unknown')",
} as const;
const THREAD_JOIN = (on: string) => `JOIN "Thread" t ON t.id = ${on}`;

interface SeriesRow {
  bucket: number;
  series: string;
  count: number;
}

/**
 * Every chart of the insights page in six statements: notices, outcomes and open episodes
 * (one index range scan each), gap bins (one scan of the range's attempts) and one scan of the
 * range's attempts grouped per thread first, from which time lost, early share per agent and
 * the top threads are taken (the per-thread rows are materialized once, a few per thread).
 */
export function insights(query: InsightsQuery, now: number, sql: Sql = db().sql): InsightsData {
  const { range, filter } = query;
  const { from, to, bucketMs } = range;
  const starts = bucketStarts(from, to, bucketMs);
  const iso = (ms: number) => new Date(ms).toISOString();

  // Retry notices: one row per (bucket, series); the covering index answers alone unless a
  // thread attribute is needed for the split or the filter.
  const notice = factFilterSql(filter, "e.kind", now);
  const noticeJoin = query.split !== "kind" || notice.thread.sql !== "1" ? THREAD_JOIN("e.threadId") : "";
  const noticeRows = sql
    .prepare(
      `SELECT e.at - (e.at % ?) AS bucket, ${SPLIT_COLUMNS[query.split]} AS series, count(*) AS count
       FROM "Event" e ${noticeJoin}
       WHERE e.type = 'retry' AND e.at >= ? AND e.at < ? AND ${notice.kind.sql} AND ${notice.thread.sql}
       GROUP BY bucket, series`,
    )
    .all(bucketMs, from, to, ...notice.kind.params, ...notice.thread.params) as SeriesRow[];
  const noticeTotals = new Map<string, number>();
  for (const row of noticeRows) noticeTotals.set(row.series, (noticeTotals.get(row.series) ?? 0) + row.count);
  const picked = pickSeries(noticeTotals, {
    order: query.split === "kind" ? TROUBLE_KINDS : [],
    limit: query.split === "kind" ? TROUBLE_KINDS.length : NOTICE_SERIES_LIMIT,
  });
  const notices = fillBuckets(
    noticeRows.map((row) => ({ ...row, series: picked.fold(row.series) })),
    starts,
    picked.series,
  );

  // Episode outcomes by the bucket of their end, and episodes of the range still open at its end.
  const episode = factFilterSql(filter, "ep.kind", now);
  const episodeJoin = episode.thread.sql !== "1" ? THREAD_JOIN("ep.threadId") : "";
  const episodeParams = [...episode.kind.params, ...episode.thread.params];
  const outcomeRows = sql
    .prepare(
      `SELECT ep.endedAt - (ep.endedAt % ?) AS bucket, ep.outcome AS series, count(*) AS count
       FROM "Episode" ep ${episodeJoin}
       WHERE ep.endedAt >= ? AND ep.endedAt < ? AND ep.outcome IS NOT NULL AND ${episode.kind.sql} AND ${episode.thread.sql}
       GROUP BY bucket, series`,
    )
    .all(bucketMs, from, to, ...episodeParams) as SeriesRow[];
  const outcomeTotals = new Map<string, number>();
  for (const row of outcomeRows) outcomeTotals.set(row.series, (outcomeTotals.get(row.series) ?? 0) + row.count);
  const outcomeSeries = pickSeries(outcomeTotals, { order: OUTCOMES, limit: Number.MAX_SAFE_INTEGER }).series;
  const outcomes = fillBuckets(outcomeRows, starts, outcomeSeries);
  const episodesOpen = sql
    .prepare(
      `SELECT count(*) FROM "Episode" ep ${episodeJoin}
       WHERE ep.startedAt >= ? AND ep.startedAt < ? AND (ep.endedAt IS NULL OR ep.endedAt >= ?)
         AND ${episode.kind.sql} AND ${episode.thread.sql}`,
    )
    .pluck()
    .get(from, to, to, ...episodeParams) as number;

  // Advised delays and actual gaps of the retries that happened, both binned in one pass.
  const attempt = factFilterSql(filter, "ep.kind", now);
  const attemptThreadJoin = attempt.thread.sql !== "1" ? THREAD_JOIN("ep.threadId") : "";
  const gapRows = sql
    .prepare(
      `SELECT ${gapBinSql("max(0, retriedAt - noticeAt)")} AS actualBin,
         CASE WHEN advisedDelayMs IS NULL THEN NULL ELSE ${gapBinSql("advisedDelayMs")} END AS advisedBin,
         count(*) AS count, sum(coalesce(earlyByMs, 0) > 0) AS early
       FROM (
         SELECT a.noticeAt, a.advisedDelayMs, a.earlyByMs, ${RETRIED_AT_SQL} AS retriedAt
         FROM "Attempt" a JOIN "Episode" ep ON ep.id = a.episodeId ${attemptThreadJoin}
         WHERE a.noticeAt >= ? AND a.noticeAt < ? AND ${attempt.kind.sql} AND ${attempt.thread.sql})
       WHERE retriedAt IS NOT NULL
       GROUP BY actualBin, advisedBin`,
    )
    .all(from, to, ...attempt.kind.params, ...attempt.thread.params) as { actualBin: number; advisedBin: number | null; count: number; early: number }[];
  const gaps = gapBinLabels().map((label, i) => ({ label, upToMs: GAP_BOUNDS_MS[i] ?? null, advised: 0, actual: 0, early: 0 }));
  for (const row of gapRows) {
    gaps[row.actualBin].actual += row.count;
    gaps[row.actualBin].early += row.early;
    if (row.advisedBin !== null) gaps[row.advisedBin].advised += row.count;
  }

  // Waits per thread (the thread filter applies after grouping: each group is one thread).
  const horizon = Math.min(to, now);
  const perThread = sql
    .prepare(
      `WITH per AS MATERIALIZED (
         SELECT x.*, coalesce(t.provider, 'unknown') AS provider, coalesce(t.model, 'unknown') AS model,
           coalesce(t.agent, 'unknown') AS agent
         FROM (
           SELECT threadId, count(*) AS attempts,
             sum(max(0, min(coalesce(retriedAt, endedAt, ?), ?) - noticeAt)) AS waitMs,
             sum(advisedDelayMs IS NOT NULL AND retriedAt IS NOT NULL) AS judged,
             -- the engine records earlyByMs only for a retry that happened sooner than advised
             sum(earlyByMs > 0) AS early, sum(CASE WHEN earlyByMs > 0 THEN earlyByMs END) AS earlyByMs
           FROM (
             SELECT ep.threadId, ep.endedAt, a.noticeAt, a.advisedDelayMs, a.earlyByMs, ${RETRIED_AT_SQL} AS retriedAt
             FROM "Attempt" a JOIN "Episode" ep ON ep.id = a.episodeId
             WHERE a.noticeAt >= ? AND a.noticeAt < ? AND ${attempt.kind.sql})
           GROUP BY threadId) x
         ${THREAD_JOIN("x.threadId")} WHERE ${attempt.thread.sql})
       SELECT 'lost' AS part, provider AS a, model AS b, sum(attempts) AS n, sum(waitMs) AS v, NULL AS w FROM per GROUP BY provider, model
       UNION ALL SELECT 'agent', agent, NULL, sum(judged), sum(early), sum(earlyByMs) FROM per GROUP BY agent HAVING sum(judged) > 0
       UNION ALL SELECT * FROM (SELECT 'top', threadId, NULL, attempts, waitMs, NULL FROM per ORDER BY waitMs DESC, threadId LIMIT ${TOP_THREADS})`,
    )
    .all(horizon, horizon, from, to, ...attempt.kind.params, ...attempt.thread.params) as {
    part: "lost" | "agent" | "top";
    a: string | number;
    b: string | null;
    n: number;
    v: number;
    w: number | null;
  }[];
  const timeLost = perThread
    .filter((row) => row.part === "lost")
    .map((row) => ({ provider: String(row.a), model: row.b ?? "unknown", attempts: row.n, timeLostMs: row.v }))
    .sort((x, y) => y.timeLostMs - x.timeLostMs || x.provider.localeCompare(y.provider) || x.model.localeCompare(y.model));
  const earlyByAgent = perThread
    .filter((row) => row.part === "agent")
    .map((row) => ({ agent: String(row.a), attempts: row.n, early: row.v, share: row.v / row.n, avgEarlyByMs: row.v ? Math.round((row.w ?? 0) / row.v) : null }))
    .sort((x, y) => y.share - x.share || x.agent.localeCompare(y.agent));
  const top = perThread.filter((row) => row.part === "top");
  const details = new Map(
    (
      sql
        .prepare(
          `SELECT t.id AS key, t.externalId AS threadId, t.sourceId, s.name AS source, t.title,
             coalesce(t.agent, 'unknown') AS agent, coalesce(t.provider, 'unknown') AS provider, coalesce(t.model, 'unknown') AS model,
             CASE WHEN ${stalledSql()} THEN 'stalled' ELSE t.status END AS status
           FROM "Thread" t JOIN "Source" s ON s.id = t.sourceId WHERE t.id IN (SELECT value FROM json_each(?))`,
        )
        .all(now, json(top.map((row) => row.a))) as ({ key: number } & Omit<InsightsData["topThreads"][number], "attempts" | "timeLostMs">)[]
    ).map(({ key, ...thread }) => [key, thread]),
  );
  const topThreads = top.flatMap((row) => {
    const thread = details.get(row.a as number);
    return thread ? [{ ...thread, attempts: row.n, timeLostMs: row.v }] : [];
  });

  const outcomeSums = Object.fromEntries(outcomeTotals);
  const attemptsJudged = earlyByAgent.reduce((sum, row) => sum + row.attempts, 0);
  const attemptsEarly = earlyByAgent.reduce((sum, row) => sum + row.early, 0);

  return {
    range: { preset: range.preset, from: iso(from), to: iso(to), bucket: range.bucket, bucketMs },
    split: query.split,
    totals: {
      notices: notices.reduce((sum, b) => sum + b.total, 0),
      episodesEnded: outcomes.reduce((sum, b) => sum + b.total, 0),
      episodesOpen,
      recoveryRatio: recoveryRatio(outcomeSums),
      timeLostMs: timeLost.reduce((sum, row) => sum + row.timeLostMs, 0),
      attemptsJudged,
      attemptsEarly,
      earlyShare: attemptsJudged ? attemptsEarly / attemptsJudged : null,
    },
    notices: { series: picked.series, buckets: notices.map((b) => ({ ...b, at: iso(b.at) })) },
    outcomes: {
      series: outcomeSeries,
      buckets: outcomes.map((b) => ({ ...b, at: iso(b.at), recoveryRatio: recoveryRatio(b.counts) })),
    },
    timeLost,
    gaps: { bins: gaps },
    earlyByAgent,
    topThreads,
  };
}

/**
 * Everything /api/metrics exposes, aggregated over the whole database at scrape time. Facts are
 * grouped per thread first (from indexes, without touching thread rows), and only those groups
 * are joined to their thread for the provider/model/agent labels: a thread is looked up once
 * per group instead of once per fact.
 */
export function metricsSnapshot(now: number, sql: Sql = db().sql): MetricsSnapshot {
  const all = <T>(text: string, ...params: unknown[]) => sql.prepare(text).all(...params) as T[];
  const labels = `coalesce(t.provider, 'unknown') AS provider, coalesce(t.model, 'unknown') AS model, coalesce(t.agent, 'unknown') AS agent`;
  const gap = "max(0, retriedAt - noticeAt)";
  const attemptRows = all<{ part: "advised" | "actual" | "early" | "wait"; kind: string; provider: string; label: string | number; n: number; ms: number | null }>(
    `WITH per AS MATERIALIZED (
       SELECT x.*, ${labels} FROM (
         SELECT threadId, kind,
           CASE WHEN advisedDelayMs IS NULL THEN NULL ELSE ${gapBinSql("advisedDelayMs")} END AS advisedBin,
           CASE WHEN retriedAt IS NULL THEN NULL ELSE ${gapBinSql(gap)} END AS actualBin,
           count(*) AS n, sum(earlyByMs > 0) AS early, sum(advisedDelayMs) AS advisedMs, sum(${gap}) AS gapMs,
           sum(max(0, coalesce(retriedAt, endedAt) - noticeAt)) AS waitMs
         FROM (
           SELECT ep.threadId, ep.kind, ep.endedAt, a.noticeAt, a.advisedDelayMs, a.earlyByMs, ${RETRIED_AT_SQL} AS retriedAt
           FROM "Attempt" a JOIN "Episode" ep ON ep.id = a.episodeId)
         GROUP BY threadId, kind, advisedBin, actualBin) x
       JOIN "Thread" t ON t.id = x.threadId)
     SELECT 'advised' AS part, kind, provider, advisedBin AS label, sum(n) AS n, sum(advisedMs) AS ms FROM per WHERE advisedBin IS NOT NULL GROUP BY 2, 3, 4
     UNION ALL SELECT 'actual', kind, provider, actualBin, sum(n), sum(gapMs) FROM per WHERE actualBin IS NOT NULL GROUP BY 2, 3, 4
     UNION ALL SELECT 'early', kind, provider, agent, sum(early), NULL FROM per GROUP BY 2, 3, 4 HAVING sum(early) > 0
     UNION ALL SELECT 'wait', kind, provider, model, count(waitMs), sum(waitMs) FROM per WHERE waitMs IS NOT NULL GROUP BY 2, 3, 4`,
  );
  const histogram = (part: "advised" | "actual"): HistogramRow[] => {
    const byLabels = new Map<string, HistogramRow>();
    for (const row of attemptRows.filter((r) => r.part === part)) {
      const key = `${row.kind}\0${row.provider}`;
      let entry = byLabels.get(key);
      if (!entry) {
        entry = { labels: { kind: row.kind, provider: row.provider }, bins: Array(GAP_BOUNDS_MS.length + 1).fill(0), sumMs: 0, count: 0 };
        byLabels.set(key, entry);
      }
      entry.bins[row.label as number] += row.n;
      entry.sumMs += row.ms ?? 0;
      entry.count += row.n;
    }
    return [...byLabels.values()];
  };
  return {
    notices: all<LabelRow<"kind" | "provider" | "model" | "agent">>(
      `SELECT x.kind, ${labels}, sum(x.n) AS value
       FROM (SELECT e.threadId, coalesce(e.kind, 'other') AS kind, count(*) AS n FROM "Event" e WHERE e.type = 'retry' GROUP BY 1, 2) x
       JOIN "Thread" t ON t.id = x.threadId GROUP BY 1, 2, 3, 4`,
    ),
    episodes: all<LabelRow<"outcome" | "kind" | "provider" | "model">>(
      `SELECT x.outcome, x.kind, coalesce(t.provider, 'unknown') AS provider, coalesce(t.model, 'unknown') AS model, sum(x.n) AS value
       FROM (SELECT ep.threadId, ep.outcome, ep.kind, count(*) AS n FROM "Episode" ep WHERE ep.outcome IS NOT NULL GROUP BY 1, 2, 3) x
       JOIN "Thread" t ON t.id = x.threadId GROUP BY 1, 2, 3, 4`,
    ),
    directives: all<LabelRow<"kind" | "result">>(
      `SELECT kind, coalesce(result, state) AS result, count(*) AS value FROM "Directive" GROUP BY 1, 2`,
    ),
    threads: all<LabelRow<"status">>(
      `SELECT CASE WHEN ${stalledSql("\"Thread\"")} THEN 'stalled' ELSE status END AS status, count(*) AS value
       FROM "Thread" GROUP BY 1`,
      now,
    ),
    earlyAttempts: attemptRows
      .filter((row) => row.part === "early")
      .map((row) => ({ kind: row.kind, provider: row.provider, agent: String(row.label), value: row.n })),
    waitMs: attemptRows
      .filter((row) => row.part === "wait")
      .map((row) => ({ kind: row.kind, provider: row.provider, model: String(row.label), value: row.ms ?? 0 })),
    advisedDelay: histogram("advised"),
    actualGap: histogram("actual"),
  };
}
