import type { HistogramRow, LabelRow, MetricsSnapshot } from "@/lib/insights/metrics";
import { GAP_BOUNDS_MS } from "@/lib/insights/gaps";
import { db, serialized } from "./client";
import { gapBinSql, RETRIED_AT_SQL, THREAD_LABELS_SQL } from "./fact-sql";
import { statement, type Sql } from "./statement";
import { viewStatusSql } from "./thread-filter";

/**
 * Everything /api/metrics exposes, aggregated over the whole database at scrape time. Facts are
 * grouped per thread first (from indexes, without touching thread rows), and only those groups
 * are joined to their thread for the provider/model/agent labels: a thread is looked up once
 * per group instead of once per fact.
 */
export function metricsSnapshot(now: number, sql: Sql = db().sql): Promise<MetricsSnapshot> {
  return serialized(() => snapshot(now, sql));
}

function snapshot(now: number, sql: Sql): MetricsSnapshot {
  const all = <T>(text: string, ...params: unknown[]) => statement(text, sql).all(...params) as T[];
  const gap = "max(0, retriedAt - noticeAt)";
  const attemptRows = all<{ part: "advised" | "actual" | "early" | "wait"; kind: string; provider: string; label: string | number; n: number; ms: number | null }>(
    `WITH per AS MATERIALIZED (
       SELECT x.*, ${THREAD_LABELS_SQL} FROM (
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
      `SELECT x.kind, ${THREAD_LABELS_SQL}, sum(x.n) AS value
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
      `SELECT ${viewStatusSql()} AS status, count(*) AS value FROM "Thread" t GROUP BY 1`,
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
