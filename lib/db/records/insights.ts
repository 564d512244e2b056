import { bucketStarts, fillBuckets, pickSeries } from "@/lib/insights/buckets";
import { GAP_BOUNDS_MS, gapBinLabels } from "@/lib/insights/gaps";
import type { InsightsQuery } from "@/lib/insights/range";
import { OUTCOMES, recoveryRatio, type InsightsData } from "@/lib/insights/types";
import { TROUBLE_KINDS } from "@/lib/threads/filter";
import type { Clause, FilterDialect } from "../thread-filter";
import { HOUR_MS, MINUTE_MS, ROLLUP_TABLES, type RollupTable } from "./rollups";
import type { ThreadProjection } from "./threads";

/**
 * The insights page's numbers from the grouped rows each store's queries answer (lib/db/insights.ts
 * on SQLite, lib/db/postgres/insights.ts): one assembler, so a chart means the same on both.
 */

export const TOP_THREADS = 10;

/** The series of the notices chart, in SQL on event alias `e` and thread alias `t` (the same on both stores). */
export const SPLIT_COLUMNS = {
  kind: "coalesce(e.kind, 'other')",
  provider: "coalesce(t.provider, 'unknown')",
  model: "coalesce(t.model, 'unknown')",
} as const;
const NOTICE_SERIES_LIMIT = 8;

/** A count per (time bucket, series). */
export interface SeriesRow {
  bucket: number;
  series: string;
  count: number;
}

/** Retries per actual-gap bin or advised-delay bin. */
export interface GapBinRow {
  actualBin: number | null;
  advisedBin: number | null;
  count: number;
  early: number;
}

/** A sum of waits: per label set (time lost, early retries) or per thread (the top threads). */
export interface WaitRow {
  threadId: number | null;
  provider: string;
  model: string;
  agent: string;
  attempts: number;
  waitMs: number;
  judged: number;
  early: number;
  earlyByMs: number;
}

/** Time lost per provider and model, and early retries per agent, from rows per thread or per label set. */
export function byLabels(rows: WaitRow[]): { lost: WaitRow[]; agents: WaitRow[] } {
  const lost = new Map<string, WaitRow>();
  const agents = new Map<string, WaitRow>();
  for (const row of rows) {
    for (const [groups, key] of [[lost, `${row.provider}\0${row.model}`], [agents, row.agent]] as const) {
      const sum = groups.get(key);
      if (!sum) groups.set(key, { ...row });
      else for (const column of ["attempts", "waitMs", "judged", "early", "earlyByMs"] as const) sum[column] += row[column];
    }
  }
  return { lost: [...lost.values()].filter((row) => row.attempts > 0), agents: [...agents.values()].filter((row) => row.judged > 0) };
}

export type ThreadWait = Pick<WaitRow, "attempts" | "waitMs"> & { threadId: number };
export const byWait = (x: ThreadWait, y: ThreadWait) => y.waitMs - x.waitMs || x.threadId - y.threadId;

/** The threads that lost the most, from rows per thread. */
export const topOf = (perThread: ThreadWait[]) => perThread.filter((row) => row.attempts > 0).sort(byWait).slice(0, TOP_THREADS);


/** A stretch of a range that one rollup table answers. */
export interface RolledStretch {
  rollup: RollupTable;
  from: number;
  to: number;
}

/**
 * The stretches of the range the rollups answer: the whole hours in the hour table when the
 * buckets are whole hours, the other whole minutes in the minute table; none when the filter
 * names what rollups are not keyed by (status, a search, or the "unknown" they hold for a label
 * never reported, which a thread filter would not match).
 */
export function rolledStretches({ filter, range }: InsightsQuery): RolledStretch[] {
  if (filter.status?.length || filter.q || filter.provider?.includes("unknown") || filter.model?.includes("unknown")) return [];
  const [minutes, hours] = ROLLUP_TABLES;
  const from = Math.ceil(range.from / MINUTE_MS) * MINUTE_MS;
  const to = Math.floor(range.to / MINUTE_MS) * MINUTE_MS;
  if (from >= to) return [];
  const hourFrom = Math.ceil(from / HOUR_MS) * HOUR_MS;
  const hourTo = Math.floor(to / HOUR_MS) * HOUR_MS;
  if (range.bucketMs % HOUR_MS !== 0 || hourFrom >= hourTo) return [{ rollup: minutes, from, to }];
  return [
    ...(from < hourFrom ? [{ rollup: minutes, from, to: hourFrom }] : []),
    { rollup: hours, from: hourFrom, to: hourTo },
    ...(hourTo < to ? [{ rollup: minutes, from: hourTo, to }] : []),
  ];
}

/** A stretch of the range one rollup table answers, with the filter on rollup alias `r`. */
export interface RolledPart extends RolledStretch {
  where: Clause;
}

/** The parts of the range the rollups answer, with the filter in the store's SQL dialect. */
export function rolledParts(query: InsightsQuery, d: FilterDialect): RolledPart[] {
  const stretches = rolledStretches(query);
  if (!stretches.length) return [];
  const { kind, provider, model, source } = query.filter;
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const [column, values] of [["kind", kind], ["provider", provider], ["model", model]] as const) {
    if (!values?.length) continue;
    parts.push(d.inList(d.column("r", column)));
    params.push(d.list(values));
  }
  if (source?.length) {
    parts.push(`(${d.inList(d.column("r", "sourceId"))} OR ${d.column("r", "sourceId")} IN (SELECT id FROM "Source" WHERE ${d.inList("name")}))`);
    params.push(d.list(source), d.list(source));
  }
  const where = { sql: parts.length ? parts.join(" AND ") : `NOT ${d.no}`, params };
  return stretches.map((stretch) => ({ ...stretch, where }));
}

/**
 * How a chart reads its range, in order: the raw facts for the partial minutes before the first
 * rolled part, the rolled parts, the raw facts after the last; all raw when nothing is rolled.
 */
export function rangePieces<P extends { from: number; to: number }>(range: { from: number; to: number }, parts: P[]): ({ raw: { from: number; to: number } } | { part: P })[] {
  if (!parts.length) return [{ raw: range }];
  const first = parts[0].from;
  const last = parts[parts.length - 1].to;
  return [
    ...(range.from < first ? [{ raw: { from: range.from, to: first } }] : []),
    ...parts.map((part) => ({ part })),
    ...(last < range.to ? [{ raw: { from: last, to: range.to } }] : []),
  ];
}

/** The same scope over part of its range. */
export const within = <S extends { query: InsightsQuery }>(scope: S, { from, to }: { from: number; to: number }): S => ({
  ...scope,
  query: { ...scope.query, range: { ...scope.query.range, from, to } },
});

export interface InsightsRows {
  notices: SeriesRow[];
  outcomes: SeriesRow[];
  gapBins: GapBinRow[];
  openEpisodes: number;
  lost: WaitRow[];
  agents: WaitRow[];
  top: ThreadWait[];
  /** The top threads by key. */
  threads: Map<number, ThreadProjection>;
}

const totalOf = (rows: SeriesRow[]) => {
  const totals = new Map<string, number>();
  for (const row of rows) totals.set(row.series, (totals.get(row.series) ?? 0) + row.count);
  return totals;
};

/** Every chart of the insights page. */
export function toInsights(query: InsightsQuery, rows: InsightsRows): InsightsData {
  const { range } = query;
  const starts = bucketStarts(range.from, range.to, range.bucketMs);
  const iso = (ms: number) => new Date(ms).toISOString();

  const picked = pickSeries(totalOf(rows.notices), {
    order: query.split === "kind" ? TROUBLE_KINDS : [],
    limit: query.split === "kind" ? TROUBLE_KINDS.length : NOTICE_SERIES_LIMIT,
  });
  const noticeBuckets = fillBuckets(
    rows.notices.map((row) => ({ ...row, series: picked.fold(row.series) })),
    starts,
    picked.series,
  );

  const outcomeTotals = totalOf(rows.outcomes);
  const outcomeSeries = pickSeries(outcomeTotals, { order: OUTCOMES, limit: Number.MAX_SAFE_INTEGER }).series;
  const outcomeBuckets = fillBuckets(rows.outcomes, starts, outcomeSeries);

  const gaps = gapBinLabels().map((label, i) => ({ label, upToMs: GAP_BOUNDS_MS[i] ?? null, advised: 0, actual: 0, early: 0 }));
  for (const row of rows.gapBins) {
    if (row.actualBin !== null) {
      gaps[row.actualBin].actual += row.count;
      gaps[row.actualBin].early += row.early;
    }
    if (row.advisedBin !== null) gaps[row.advisedBin].advised += row.count;
  }

  const { lost, agents, top, threads } = rows;
  const timeLost = lost
    .map((row) => ({ provider: row.provider, model: row.model, attempts: row.attempts, timeLostMs: row.waitMs }))
    .sort((x, y) => y.timeLostMs - x.timeLostMs || x.provider.localeCompare(y.provider) || x.model.localeCompare(y.model));
  const earlyByAgent = agents
    .map((row) => ({ agent: row.agent, attempts: row.judged, early: row.early, share: row.early / row.judged, avgEarlyByMs: row.early ? Math.round((row.earlyByMs ?? 0) / row.early) : null }))
    .sort((x, y) => y.share - x.share || x.agent.localeCompare(y.agent));
  const topThreads = top.flatMap((row) => {
    const thread = threads.get(row.threadId);
    if (!thread) return [];
    const { threadId, sourceId, source, title, status } = thread;
    const labels = { agent: thread.agent ?? "unknown", provider: thread.provider ?? "unknown", model: thread.model ?? "unknown" };
    return [{ threadId, sourceId, source, title, ...labels, status, attempts: row.attempts, timeLostMs: row.waitMs }];
  });

  const attemptsJudged = earlyByAgent.reduce((sum, row) => sum + row.attempts, 0);
  const attempts = timeLost.reduce((sum, row) => sum + row.attempts, 0);
  const episodesEnded = outcomeBuckets.reduce((sum, b) => sum + b.total, 0);
  const attemptsEarly = earlyByAgent.reduce((sum, row) => sum + row.early, 0);
  return {
    range: { preset: range.preset, from: iso(range.from), to: iso(range.to), bucket: range.bucket, bucketMs: range.bucketMs },
    split: query.split,
    totals: {
      notices: noticeBuckets.reduce((sum, b) => sum + b.total, 0),
      episodesEnded,
      episodesOpen: rows.openEpisodes,
      recoveryRatio: recoveryRatio(Object.fromEntries(outcomeTotals)),
      timeLostMs: timeLost.reduce((sum, row) => sum + row.timeLostMs, 0),
      attempts,
      attemptsPerEpisode: episodesEnded ? 1 + attempts / episodesEnded : null,
      attemptsJudged,
      attemptsEarly,
      earlyShare: attemptsJudged ? attemptsEarly / attemptsJudged : null,
    },
    notices: { series: picked.series, buckets: noticeBuckets.map((b) => ({ ...b, at: iso(b.at) })) },
    outcomes: {
      series: outcomeSeries,
      buckets: outcomeBuckets.map((b) => ({ ...b, at: iso(b.at), recoveryRatio: recoveryRatio(b.counts) })),
    },
    timeLost,
    gaps: { bins: gaps },
    earlyByAgent,
    topThreads,
  };
}
