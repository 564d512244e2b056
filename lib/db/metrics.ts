import type { HistogramRow, LabelRow, MetricsSnapshot } from "@/lib/insights/metrics";
import { committedRead, db } from "./client";
import * as postgres from "./postgres/metrics";
import { histogramOf } from "./records/metrics";
import { pluck, statement, type Sql } from "./statement";
import { onEitherStore } from "./store";
import { notJoinedSql, viewStatusSql } from "./thread-filter";

/**
 * Everything /api/metrics exposes. The counters come from MetricTotal (lib/db/rollups.ts), one
 * row per label set, and the gauges from the threads' current statuses and the directives: the
 * cost does not grow with the history of notices, episodes and attempts.
 * `notices` are the monotonic counts of notices seen; the others are the corrected facts (a
 * replay may lower one; lib/insights/metrics.ts keeps what it exposes from going down).
 *
 * The server reads it on the read worker (lib/db/reads.ts): its dozen grouped queries take tens of
 * milliseconds at a million events, which the thread that ingests must not spend. Elsewhere
 * (tests, benchmarks) metricsSnapshot() reads it on the read-only connection in one read transaction.
 */
function metricsSnapshotOnSqlite(now: number, sql?: Sql): Promise<MetricsSnapshot> {
  if (sql) return Promise.resolve(readMetrics(now, sql));
  return committedRead((readOnly) => readOnly.transaction(() => readMetrics(now, readOnly))());
}

/** The snapshot, synchronously on `sql` (the caller holds the read transaction). */
export function readMetrics(now: number, sql: Sql = db().sql): MetricsSnapshot {
  const all = <T>(text: string, ...params: unknown[]) => statement(text, sql).all(...params) as T[];
  // `labels` are the label columns; MetricTotal's `label` is the outcome or a histogram bin.
  const totals = <L extends string>(fact: string, labels: string, value: string, having = "sum(n) > 0") =>
    all<LabelRow<L>>(
      `SELECT ${labels.replace("outcome", "label AS outcome")}, ${value} AS value FROM "MetricTotal" WHERE fact = ?
       GROUP BY ${labels.replace("outcome", "label")} HAVING ${having}`,
      fact,
    );
  const histogram = (fact: "advised" | "actual"): HistogramRow[] =>
    histogramOf(
      all<{ kind: string; provider: string; label: string; n: number; ms: number }>(
        `SELECT kind, provider, label, sum(n) AS n, sum(ms) AS ms FROM "MetricTotal" WHERE fact = ? GROUP BY 1, 2, 3 HAVING sum(n) > 0`,
        fact,
      ),
    );
  return {
    notices: totals("noticeSeen", "kind, provider, model, agent", "sum(n)"),
    episodes: totals("outcome", "outcome, kind, provider, model", "sum(n)"),
    directives: all<LabelRow<"kind" | "result">>(
      `SELECT kind, coalesce(result, state) AS result, count(*) AS value FROM "Directive" GROUP BY 1, 2`,
    ),
    threads: all<LabelRow<"status">>(
      `SELECT ${viewStatusSql()} AS status, count(*) AS value FROM "Thread" t WHERE ${notJoinedSql()} GROUP BY 1`,
      now,
    ),
    earlyAttempts: totals("attempt", "kind, provider, agent", "sum(early)", "sum(early) > 0"),
    attempts: totals("attempt", "kind, provider, model", "sum(n)", "sum(n) > 0"),
    waitMs: totals("attempt", "kind, provider, model", "sum(ms)", "sum(waited) > 0"),
    advisedDelay: histogram("advised"),
    actualGap: histogram("actual"),
    incidentsOpen: all<LabelRow<"kind" | "provider" | "model">>(
      `SELECT kind, coalesce(provider, '') AS provider, coalesce(model, '') AS model, count(*) AS value FROM "Incident" WHERE state = 'open' GROUP BY 1, 2, 3`,
    ),
    incidentsTotal: pluck(`SELECT count(*) FROM "Incident" WHERE state != 'forming'`, sql).get() as number,
    alertOutbox: all<LabelRow<"result">>(`SELECT state AS result, count(*) AS value FROM "AlertOutbox" GROUP BY state`),
    alertOldestPendingS: Math.max(0, (now - ((pluck(`SELECT min(createdAt) FROM "AlertOutbox" WHERE state = 'pending'`, sql).get() as number | null) ?? now)) / 1000),
  };
}

export const { metricsSnapshot } = onEitherStore({ metricsSnapshot: metricsSnapshotOnSqlite }, postgres);
