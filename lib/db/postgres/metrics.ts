import type { HistogramRow, LabelRow, MetricsSnapshot } from "@/lib/insights/metrics";
import { histogramOf } from "../records/metrics";
import { rowsOf, snapshotRead } from "./sql";
import { notJoinedSql, viewStatusSql } from "./thread-filter";
import { msFromTimestamp } from "./time";

/**
 * lib/db/metrics.ts on PostgreSQL: the same counters (MetricTotal) and gauges on one snapshot,
 * label rows in SQLite's order (labels in byte order), so the exposition text is the same.
 * Sums are cast back to BIGINT (PostgreSQL sums integers as NUMERIC, which pg reads as text).
 */
export function metricsSnapshot(now: number): Promise<MetricsSnapshot> {
  return snapshotRead(async (db) => {
    const all = <T extends object>(text: string, ...params: unknown[]) => rowsOf<T>(text, params, db);
    const ordered = (labels: string) => labels.split(", ").map((label) => `${label} COLLATE "C"`).join(", ");
    // `labels` are the label columns; MetricTotal's `label` is the outcome or a histogram bin.
    const totals = <L extends string>(fact: string, labels: string, value: string, having = "sum(n) > 0") => {
      const grouped = labels.replace("outcome", "label");
      return all<LabelRow<L>>(
        `SELECT ${labels.replace("outcome", "label AS outcome")}, (${value})::bigint AS value FROM "MetricTotal" WHERE fact = ?
         GROUP BY ${grouped} HAVING ${having} ORDER BY ${ordered(grouped)}`,
        fact,
      );
    };
    const histogram = async (fact: "advised" | "actual"): Promise<HistogramRow[]> =>
      histogramOf(
        await all<{ kind: string; provider: string; label: string; n: number; ms: number }>(
          `SELECT kind, provider, label, sum(n)::bigint AS n, sum(ms)::bigint AS ms FROM "MetricTotal" WHERE fact = ?
           GROUP BY 1, 2, 3 HAVING sum(n) > 0 ORDER BY ${ordered("kind, provider, label")}`,
          fact,
        ),
      );
    const notices = await totals<"kind" | "provider" | "model" | "agent">("noticeSeen", "kind, provider, model, agent", "sum(n)");
    const episodes = await totals<"outcome" | "kind" | "provider" | "model">("outcome", "outcome, kind, provider, model", "sum(n)");
    const directives = await all<LabelRow<"kind" | "result">>(
      `SELECT kind, coalesce(result, state) AS result, count(*) AS value FROM "Directive" GROUP BY 1, 2 ORDER BY kind COLLATE "C", coalesce(result, state) COLLATE "C"`,
    );
    const threads = await all<LabelRow<"status">>(
      `SELECT status, value FROM (SELECT ${viewStatusSql()} AS status, count(*) AS value FROM "Thread" t WHERE ${notJoinedSql()} GROUP BY 1) x
       ORDER BY status COLLATE "C"`,
      now,
    );
    const earlyAttempts = await totals<"kind" | "provider" | "agent">("attempt", "kind, provider, agent", "sum(early)", "sum(early) > 0");
    const attempts = await totals<"kind" | "provider" | "model">("attempt", "kind, provider, model", "sum(n)", "sum(n) > 0");
    const waitMs = await totals<"kind" | "provider" | "model">("attempt", "kind, provider, model", "sum(ms)", "sum(waited) > 0");
    const advisedDelay = await histogram("advised");
    const actualGap = await histogram("actual");
    const incidentsOpen = await all<LabelRow<"kind" | "provider" | "model">>(
      `SELECT kind, coalesce(provider, '') AS provider, coalesce(model, '') AS model, count(*) AS value FROM "Incident" WHERE state = 'open'
       GROUP BY 1, 2, 3 ORDER BY kind COLLATE "C", coalesce(provider, '') COLLATE "C", coalesce(model, '') COLLATE "C"`,
    );
    const [{ n: incidentsTotal }] = await all<{ n: number }>(`SELECT count(*) AS n FROM "Incident" WHERE state != 'forming'`);
    const alertOutbox = await all<LabelRow<"result">>(`SELECT state AS result, count(*) AS value FROM "AlertOutbox" GROUP BY state ORDER BY state COLLATE "C"`);
    const [{ oldest }] = await all<{ oldest: number | null }>(`SELECT ${msFromTimestamp(`min("createdAt")`)} AS oldest FROM "AlertOutbox" WHERE state = 'pending'`);
    return {
      notices,
      episodes,
      directives,
      threads,
      earlyAttempts,
      attempts,
      waitMs,
      advisedDelay,
      actualGap,
      incidentsOpen,
      incidentsTotal,
      alertOutbox,
      alertOldestPendingS: Math.max(0, (now - (oldest ?? now)) / 1000),
    };
  });
}
