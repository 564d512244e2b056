import type Database from "better-sqlite3";
import { bucketStarts, fillBuckets, pickSeries } from "@/lib/insights/buckets";
import { GAP_BOUNDS_MS, gapBinLabels } from "@/lib/insights/gaps";
import type { HistogramRow, LabelRow, MetricsSnapshot } from "@/lib/insights/metrics";
import type { FactFilter, InsightsQuery } from "@/lib/insights/range";
import { OUTCOMES, recoveryRatio, type InsightsData } from "@/lib/insights/types";
import { TROUBLE_KINDS } from "@/lib/threads/filter";
import { db } from "./client";
import type { ThreadFilter } from "./threads";

/**
 * Insights, metrics and the shared SQL thread filter. Every number is aggregated in SQLite
 * (GROUP BY over time buckets and labels); only grouped rows reach JavaScript, never events.
 *
 * Cost: each chart is one range scan of an index on the fact's own time —
 * Event(type, at, kind, threadId) (covering) for notices, Attempt(noticeAt) for waits and gaps,
 * Episode(endedAt) for outcomes — plus a primary-key lookup of the thread per fact. So a query
 * costs O(log N + k) for k facts inside the range, independent of the events outside it; the
 * metrics snapshot has no range and is O(retry notices + attempts + episodes + threads).
 * Progress deltas never count: they are not facts of these charts (and are folded anyway).
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
 */
export function threadFilterSql(filter: ThreadFilter, now: number, t = "t"): Clause {
  const parts: string[] = [];
  const params: unknown[] = [];
  if (filter.status?.length) {
    const ors = filter.status.map((status) => {
      if (status === "stalled") {
        params.push(now);
        return `(${t}.status = 'retrying' AND ${t}.deadlineAt < ?)`;
      }
      if (status === "retrying") {
        params.push(now);
        return `(${t}.status = 'retrying' AND (${t}.deadlineAt IS NULL OR ${t}.deadlineAt >= ?))`;
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
  if (filter.from !== undefined) {
    parts.push(`${t}.updatedAt >= ?`);
    params.push(filter.from);
  }
  if (filter.to !== undefined) {
    parts.push(`${t}.updatedAt <= ?`);
    params.push(filter.to);
  }
  return { sql: parts.length ? parts.join(" AND ") : "1", params };
}

/**
 * Insights and exports of facts (notices, episodes, attempts): `kind` is the fact's own kind —
 * filtering kind=capacity shows capacity notices, not every notice of threads whose latest
 * trouble was capacity. Every other field filters the threads, as on the board.
 */
export function factFilterSql(filter: FactFilter, kindColumn: string, now: number): Clause {
  const { kind, ...threadFilter } = filter;
  const thread = threadFilterSql(threadFilter, now);
  if (!kind?.length) return thread;
  return { sql: `${inList(`coalesce(${kindColumn}, 'other')`)} AND ${thread.sql}`, params: [json(kind), ...thread.params] };
}

/** The bin index of a millisecond expression, as GAP_BOUNDS_MS (and gapBin) define it. */
export function gapBinSql(expression: string): string {
  return `CASE ${GAP_BOUNDS_MS.map((bound, i) => `WHEN ${expression} <= ${bound} THEN ${i}`).join(" ")} ELSE ${GAP_BOUNDS_MS.length} END`;
}

/**
 * How long a retry waited: from its notice until the attempt started, or else until the next
 * notice of its episode (the attempt evidently happened), or else until the episode ended; a
 * wait still open runs until `horizon` (the range end, or now). Never negative.
 */
export function waitMsSql(horizon: string): string {
  return `max(0, min(coalesce(a.startedAt,
      (SELECT min(b.noticeAt) FROM "Attempt" b WHERE b.episodeId = a.episodeId AND b.n > a.n),
      ep.endedAt, ${horizon}), ${horizon}) - a.noticeAt)`;
}

const TOP_THREADS = 10;
const NOTICE_SERIES_LIMIT = 8;
const SPLIT_COLUMNS = {
  kind: "coalesce(e.kind, 'other')",
  provider: "coalesce(t.provider, 'unknown')",
  model: "coalesce(t.model, 'unknown')",
} as const;

interface SeriesRow {
  bucket: number;
  series: string;
  count: number;
}

export function insights(query: InsightsQuery, now: number, sql: Sql = db().sql): InsightsData {
  const { range, filter } = query;
  const { from, to, bucketMs } = range;
  const starts = bucketStarts(from, to, bucketMs);
  const iso = (ms: number) => new Date(ms).toISOString();

  // Retry notices: one row per (bucket, series).
  const notice = factFilterSql(filter, "e.kind", now);
  const noticeRows = sql
    .prepare(
      `SELECT e.at - (e.at % ?) AS bucket, ${SPLIT_COLUMNS[query.split]} AS series, count(*) AS count
       FROM "Event" e JOIN "Thread" t ON t.id = e.threadId
       WHERE e.type = 'retry' AND e.at >= ? AND e.at < ? AND ${notice.sql}
       GROUP BY bucket, series`,
    )
    .all(bucketMs, from, to, ...notice.params) as SeriesRow[];
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

  // Episode outcomes by the bucket of their end.
  const episode = factFilterSql(filter, "ep.kind", now);
  const outcomeRows = sql
    .prepare(
      `SELECT ep.endedAt - (ep.endedAt % ?) AS bucket, ep.outcome AS series, count(*) AS count
       FROM "Episode" ep JOIN "Thread" t ON t.id = ep.threadId
       WHERE ep.outcome IS NOT NULL AND ep.endedAt >= ? AND ep.endedAt < ? AND ${episode.sql}
       GROUP BY bucket, series`,
    )
    .all(bucketMs, from, to, ...episode.params) as SeriesRow[];
  const outcomeTotals = new Map<string, number>();
  for (const row of outcomeRows) outcomeTotals.set(row.series, (outcomeTotals.get(row.series) ?? 0) + row.count);
  const outcomeSeries = pickSeries(outcomeTotals, { order: OUTCOMES, limit: Number.MAX_SAFE_INTEGER }).series;
  const outcomes = fillBuckets(outcomeRows, starts, outcomeSeries);
  const episodesOpen = sql
    .prepare(
      `SELECT count(*) FROM "Episode" ep JOIN "Thread" t ON t.id = ep.threadId
       WHERE ep.startedAt >= ? AND ep.startedAt < ? AND (ep.endedAt IS NULL OR ep.endedAt >= ?) AND ${episode.sql}`,
    )
    .pluck()
    .get(from, to, to, ...episode.params) as number;

  // Attempts noticed in the range, with their wait, shared by the four attempt charts.
  const attempt = factFilterSql(filter, "ep.kind", now);
  const horizon = Math.min(to, now);
  const waits = `WITH w AS (
      SELECT a.id, ep.threadId, coalesce(t.provider, 'unknown') AS provider, coalesce(t.model, 'unknown') AS model,
        coalesce(t.agent, 'unknown') AS agent, a.noticeAt, a.startedAt, a.advisedDelayMs, a.earlyByMs,
        ${waitMsSql("?")} AS waitMs
      FROM "Attempt" a JOIN "Episode" ep ON ep.id = a.episodeId JOIN "Thread" t ON t.id = ep.threadId
      WHERE a.noticeAt >= ? AND a.noticeAt < ? AND ${attempt.sql})`;
  const waitParams = [horizon, horizon, from, to, ...attempt.params];

  const timeLost = sql
    .prepare(
      `${waits} SELECT provider, model, count(*) AS attempts, sum(waitMs) AS timeLostMs FROM w
       GROUP BY provider, model ORDER BY timeLostMs DESC, provider, model`,
    )
    .all(...waitParams) as InsightsData["timeLost"];

  const actualBins = sql
    .prepare(
      `${waits} SELECT ${gapBinSql("(startedAt - noticeAt)")} AS bin, count(*) AS actual, sum(coalesce(earlyByMs, 0) > 0) AS early
       FROM w WHERE startedAt IS NOT NULL GROUP BY bin`,
    )
    .all(...waitParams) as { bin: number; actual: number; early: number }[];
  const advisedBins = sql
    .prepare(
      `${waits} SELECT ${gapBinSql("advisedDelayMs")} AS bin, count(*) AS advised
       FROM w WHERE startedAt IS NOT NULL AND advisedDelayMs IS NOT NULL GROUP BY bin`,
    )
    .all(...waitParams) as { bin: number; advised: number }[];
  const labels = gapBinLabels();
  const gaps = labels.map((label, i) => ({
    label,
    upToMs: GAP_BOUNDS_MS[i] ?? null,
    advised: advisedBins.find((row) => row.bin === i)?.advised ?? 0,
    actual: actualBins.find((row) => row.bin === i)?.actual ?? 0,
    early: actualBins.find((row) => row.bin === i)?.early ?? 0,
  }));

  const earlyByAgent = (
    sql
      .prepare(
        `${waits} SELECT agent, count(*) AS attempts, sum(coalesce(earlyByMs, 0) > 0) AS early,
           avg(CASE WHEN earlyByMs > 0 THEN earlyByMs END) AS avgEarlyByMs
         FROM w WHERE startedAt IS NOT NULL AND advisedDelayMs IS NOT NULL
         GROUP BY agent ORDER BY early * 1.0 / count(*) DESC, agent`,
      )
      .all(...waitParams) as { agent: string; attempts: number; early: number; avgEarlyByMs: number | null }[]
  ).map((row) => ({ ...row, share: row.attempts ? row.early / row.attempts : null, avgEarlyByMs: row.avgEarlyByMs === null ? null : Math.round(row.avgEarlyByMs) }));

  const topThreads = (
    sql
      .prepare(
        `${waits}, top AS (
           SELECT threadId, count(*) AS attempts, sum(waitMs) AS timeLostMs FROM w
           GROUP BY threadId ORDER BY timeLostMs DESC, threadId LIMIT ${TOP_THREADS})
         SELECT t.externalId AS threadId, t.sourceId, s.name AS source, t.title, coalesce(t.agent, 'unknown') AS agent,
           coalesce(t.provider, 'unknown') AS provider, coalesce(t.model, 'unknown') AS model,
           CASE WHEN t.status = 'retrying' AND t.deadlineAt < ? THEN 'stalled' ELSE t.status END AS status,
           top.attempts, top.timeLostMs
         FROM top JOIN "Thread" t ON t.id = top.threadId JOIN "Source" s ON s.id = t.sourceId
         ORDER BY top.timeLostMs DESC, top.threadId`,
      )
      .all(...waitParams, now) as InsightsData["topThreads"]
  );

  const outcomeSums: Record<string, number> = {};
  for (const row of outcomeRows) outcomeSums[row.series] = (outcomeSums[row.series] ?? 0) + row.count;
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

/** Everything /api/metrics exposes, aggregated over the whole database at scrape time. */
export function metricsSnapshot(now: number, sql: Sql = db().sql): MetricsSnapshot {
  const all = <T>(text: string, ...params: unknown[]) => sql.prepare(text).all(...params) as T[];
  const attempts = `FROM "Attempt" a JOIN "Episode" ep ON ep.id = a.episodeId JOIN "Thread" t ON t.id = ep.threadId`;
  const provider = "coalesce(t.provider, 'unknown')";
  const histogram = (valueMs: string, where: string): HistogramRow[] => {
    const rows = all<{ kind: string; provider: string; bin: number; count: number; sumMs: number }>(
      `SELECT ep.kind AS kind, ${provider} AS provider, ${gapBinSql(valueMs)} AS bin, count(*) AS count, sum(${valueMs}) AS sumMs
       ${attempts} WHERE ${where} GROUP BY ep.kind, provider, bin`,
    );
    const byLabels = new Map<string, HistogramRow>();
    for (const row of rows) {
      const key = `${row.kind}\0${row.provider}`;
      let entry = byLabels.get(key);
      if (!entry) {
        entry = { labels: { kind: row.kind, provider: row.provider }, bins: Array(GAP_BOUNDS_MS.length + 1).fill(0), sumMs: 0, count: 0 };
        byLabels.set(key, entry);
      }
      entry.bins[row.bin] += row.count;
      entry.sumMs += row.sumMs;
      entry.count += row.count;
    }
    return [...byLabels.values()];
  };
  const finishedWait = `coalesce(a.startedAt, (SELECT min(b.noticeAt) FROM "Attempt" b WHERE b.episodeId = a.episodeId AND b.n > a.n), ep.endedAt)`;
  return {
    notices: all<LabelRow<"kind" | "provider" | "model" | "agent">>(
      `SELECT coalesce(e.kind, 'other') AS kind, ${provider} AS provider, coalesce(t.model, 'unknown') AS model,
         coalesce(t.agent, 'unknown') AS agent, count(*) AS value
       FROM "Event" e JOIN "Thread" t ON t.id = e.threadId WHERE e.type = 'retry'
       GROUP BY 1, 2, 3, 4`,
    ),
    episodes: all<LabelRow<"outcome" | "kind" | "provider" | "model">>(
      `SELECT ep.outcome AS outcome, ep.kind AS kind, ${provider} AS provider, coalesce(t.model, 'unknown') AS model, count(*) AS value
       FROM "Episode" ep JOIN "Thread" t ON t.id = ep.threadId WHERE ep.outcome IS NOT NULL
       GROUP BY 1, 2, 3, 4`,
    ),
    directives: all<LabelRow<"kind" | "result">>(
      `SELECT kind, coalesce(result, state) AS result, count(*) AS value FROM "Directive" GROUP BY 1, 2`,
    ),
    threads: all<LabelRow<"status">>(
      `SELECT CASE WHEN status = 'retrying' AND deadlineAt < ? THEN 'stalled' ELSE status END AS status, count(*) AS value
       FROM "Thread" GROUP BY 1`,
      now,
    ),
    earlyAttempts: all<LabelRow<"kind" | "provider" | "agent">>(
      `SELECT ep.kind AS kind, ${provider} AS provider, coalesce(t.agent, 'unknown') AS agent, count(*) AS value
       ${attempts} WHERE a.earlyByMs > 0 GROUP BY 1, 2, 3`,
    ),
    waitMs: all<LabelRow<"kind" | "provider" | "model">>(
      `SELECT ep.kind AS kind, ${provider} AS provider, coalesce(t.model, 'unknown') AS model,
         sum(max(0, ${finishedWait} - a.noticeAt)) AS value
       ${attempts} WHERE ${finishedWait} IS NOT NULL GROUP BY 1, 2, 3`,
    ),
    advisedDelay: histogram("a.advisedDelayMs", "a.advisedDelayMs IS NOT NULL"),
    actualGap: histogram("max(0, a.startedAt - a.noticeAt)", "a.startedAt IS NOT NULL"),
  };
}
