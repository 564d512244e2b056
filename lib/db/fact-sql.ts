import { GAP_BOUNDS_MS } from "@/lib/insights/gaps";
import type { FactFilter } from "@/lib/insights/range";
import { inList, recordFilterSql, type Clause } from "./thread-filter";

/**
 * SQL for the facts the insights, metrics and exports count — retry notices (events), episodes
 * and attempts — shared so a wait or a gap means the same number everywhere.
 */

/**
 * Insights and exports of facts: `kind` is the fact's own kind — filtering kind=capacity shows
 * capacity notices, not every notice of threads whose latest trouble was capacity. Every other
 * field filters the threads, as on the board. The two parts are apart so a query joins the
 * thread only when it must.
 */
export function factFilterSql(filter: FactFilter, kindColumn: string, now: number): { kind: Clause; thread: Clause } {
  const { kind, ...threadFilter } = filter;
  return {
    kind: kind?.length ? { sql: inList(`coalesce(${kindColumn}, 'other')`), params: [JSON.stringify(kind)] } : { sql: "1", params: [] },
    thread: recordFilterSql(threadFilter, now),
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

/** Provider, model and agent of thread alias `t` as labels ("unknown" when not reported). */
export const THREAD_LABELS_SQL = `coalesce(t.provider, 'unknown') AS provider, coalesce(t.model, 'unknown') AS model, coalesce(t.agent, 'unknown') AS agent`;
