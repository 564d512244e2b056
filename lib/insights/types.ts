import type { BucketUnit } from "./buckets";
import type { RangePreset, Split } from "./range";

/**
 * What /api/v1/insights returns and the insights page renders: every chart's numbers, computed
 * in SQL over the range (lib/db/insights.ts). Times are ISO-8601 UTC.
 */
export interface InsightsData {
  range: { preset: RangePreset | "custom"; from: string; to: string; bucket: BucketUnit; bucketMs: number };
  split: Split;
  totals: {
    notices: number;
    episodesEnded: number;
    /** Episodes started before the range end and still open at it. */
    episodesOpen: number;
    /** (recovered + completed) ÷ (recovered + completed + exhausted + failed); null without any. */
    recoveryRatio: number | null;
    timeLostMs: number;
    /** Retries made in the range, those an agent counted at give-up without a notice included. */
    attempts: number;
    /** Calls per episode ended in the range, the first included: 1 + retries ÷ episodes ended; null without any. */
    attemptsPerEpisode: number | null;
    /** Attempts that started and had advice, so early or not can be judged. */
    attemptsJudged: number;
    attemptsEarly: number;
    earlyShare: number | null;
  };
  /** Retry notices per bucket, split by `split`. */
  notices: { series: string[]; buckets: { at: string; total: number; counts: Record<string, number> }[] };
  /** Episodes by outcome per bucket of their end time. */
  outcomes: {
    series: string[];
    buckets: { at: string; total: number; counts: Record<string, number>; recoveryRatio: number | null }[];
  };
  /** Sum of backoff waits by provider and model, largest first. */
  timeLost: { provider: string; model: string; attempts: number; timeLostMs: number }[];
  /** Advised delays and actual gaps of attempts that started, in GAP_BOUNDS_MS bins. */
  gaps: { bins: { label: string; upToMs: number | null; advised: number; actual: number; early: number }[] };
  earlyByAgent: { agent: string; attempts: number; early: number; share: number | null; avgEarlyByMs: number | null }[];
  topThreads: {
    threadId: string;
    sourceId: string;
    source: string;
    title: string | null;
    agent: string;
    provider: string;
    model: string;
    status: string;
    attempts: number;
    timeLostMs: number;
  }[];
}

/** Episode outcomes in the order the chart stacks them (good at the bottom). */
export const OUTCOMES = ["recovered", "completed", "exhausted", "failed", "stopped", "interrupted", "superseded"] as const;
/** Outcomes that count as success and as failure in the recovery ratio (the rest are decisions, not results). */
const RECOVERED_OUTCOMES = ["recovered", "completed"] as const;
const FAILED_OUTCOMES = ["exhausted", "failed"] as const;

export function recoveryRatio(counts: Readonly<Record<string, number>>): number | null {
  const ok = RECOVERED_OUTCOMES.reduce((sum, o) => sum + (counts[o] ?? 0), 0);
  const bad = FAILED_OUTCOMES.reduce((sum, o) => sum + (counts[o] ?? 0), 0);
  return ok + bad === 0 ? null : ok / (ok + bad);
}
