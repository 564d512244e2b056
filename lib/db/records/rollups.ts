/** What both stores' rollup writers share (lib/db/rollups.ts, lib/db/postgres/rollups.ts). */

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;

/**
 * The two granularities, each a table of the same shape: minutes for short ranges and the
 * partial hours at a range's edges, hours for the whole hours of long ranges (a 7-day view reads
 * 168 hours instead of 10,080 minutes). A fact without a time (minute -1) keeps it in both.
 */
export const ROLLUP_TABLES = [
  { table: "Rollup", time: "minute", ms: MINUTE_MS },
  { table: "RollupHour", time: "hour", ms: HOUR_MS },
] as const;
export type RollupTable = (typeof ROLLUP_TABLES)[number];

/**
 * Facts written only to the rollup tables, never to MetricTotal: insights count notices by minute
 * (metrics count them as seen), and `threadWait` is the `attempt` fact per thread (label = the
 * thread's key) for the top threads, whose rows grow with the threads.
 */
export const ROLLUP_ONLY_FACTS = ["notice", "threadWait"];

/** The counters every rollup row carries (Rollup, RollupHour, MetricTotal), in column order. */
export const ROLLUP_COUNTERS = ["n", "ms", "waited", "judged", "early", "earlyMs"] as const;

/** One fact row: its key and its counters (signed when applied). */
export interface FactRow {
  fact: string;
  minute: number;
  kind: string;
  provider: string;
  model: string;
  agent: string;
  sourceId: string;
  label: string;
  n: number;
  ms: number;
  waited: number;
  judged: number;
  early: number;
  earlyMs: number;
}

/** The hour of a minute, minute -1 (no time) staying -1. */
export const hourOf = (minute: number) => (minute < 0 ? minute : minute - (minute % HOUR_MS));

/** A thread's labels as its facts are keyed: a thread whose key changes moves its facts (see threadFacts). */
export function labelsKey(labels: { provider?: string | null; model?: string | null; agent?: string | null }): string {
  return [labels.provider, labels.model, labels.agent].map((label) => label ?? "unknown").join("\0");
}
