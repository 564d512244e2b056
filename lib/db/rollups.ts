import { gapBinSql, RETRIED_AT_SQL } from "./fact-sql";
import { hourOf, HOUR_MS, MINUTE_MS, ROLLUP_COUNTERS, ROLLUP_ONLY_FACTS, type FactRow } from "./records/rollups";
import { pluck, statement, type Sql } from "./statement";
import { db, serialized, withTempOnDisk } from "./client";
import * as postgres from "./postgres/rollups";
import { onEitherStore } from "./store";
import { notJoinedSql } from "./thread-filter";

/**
 * Rollups: per-minute counters of the facts insights and metrics count, so neither reads history
 * to answer. Two tables, two meanings:
 *
 * - `Rollup` holds the corrected facts, per minute of the fact's own time and per kind, provider,
 *   model, agent and source: retry notices (`notice`), ended episodes by outcome (`outcome`), and
 *   per attempt the count, finished wait, early retries (`attempt`) and the gap histograms
 *   (`advised`, `actual`, `advisedRetried`). They always equal the aggregation of the stored events,
 *   episodes and attempts under the threads' current labels: every write of those rows applies the
 *   difference between the old and the new facts in the same unit of work (a replay, the watchdog,
 *   a stop, retention, a thread whose provider or model changed). A correction may lower them.
 * - `MetricTotal` is what /api/metrics exposes, one row per label set whatever the history. Its
 *   `noticeSeen` rows are monotonic counters of the notices ever received, under the labels their
 *   thread had when they arrived: retention and label changes never lower them. Its other rows are
 *   the corrected totals of `Rollup` without minute and source (lib/insights/metrics.ts keeps the
 *   exposed counters from going down when a replay corrects one).
 *
 * Every write is an upsert adding its difference (`n = n + excluded.n`), so several writers may
 * apply theirs at once.
 */

export { HOUR_MS, MINUTE_MS } from "./records/rollups";

const minuteOf = (column: string) => `(${column} - ${column} % ${MINUTE_MS})`;

export { ROLLUP_TABLES, type RollupTable } from "./records/rollups";

/**
 * Fact rows (fact, minute, kind, provider, model, agent, sourceId, label and the counters) of the
 * episodes matching `episodeWhere` (on alias `ep`) and the retry notices matching `eventWhere` (on
 * alias `e`); null leaves that part out. Labels are the threads' current ones. A thread joined to
 * another (lib/db/thread-join.ts) has no facts of its own: its path's facts are the other's too.
 */
export function factsSql(episodeWhere: string | null, eventWhere: string | null): string {
  const minute = minuteOf("noticeAt");
  const bin = (expression: string) => `CAST(${gapBinSql(expression)} AS TEXT)`;
  const parts: string[] = [];
  if (episodeWhere !== null) {
    parts.push(
      `SELECT threadId, 'attempt' AS fact, ${minute} AS minute, kind, '' AS label, count(*) AS n,
         coalesce(sum(max(0, coalesce(retriedAt, endedAt) - noticeAt)), 0) AS ms, count(coalesce(retriedAt, endedAt)) AS waited,
         sum(advisedDelayMs IS NOT NULL AND retriedAt IS NOT NULL) AS judged, sum(coalesce(earlyByMs, 0) > 0) AS early,
         coalesce(sum(CASE WHEN earlyByMs > 0 THEN earlyByMs END), 0) AS earlyMs
       FROM a GROUP BY 1, 2, 3, 4, 5`,
      `SELECT threadId, 'threadWait', ${minute}, kind, CAST(threadId AS TEXT), count(*),
         coalesce(sum(max(0, coalesce(retriedAt, endedAt) - noticeAt)), 0), count(coalesce(retriedAt, endedAt)),
         sum(advisedDelayMs IS NOT NULL AND retriedAt IS NOT NULL), sum(coalesce(earlyByMs, 0) > 0),
         coalesce(sum(CASE WHEN earlyByMs > 0 THEN earlyByMs END), 0)
       FROM a GROUP BY 1, 2, 3, 4, 5`,
      `SELECT threadId, 'advised', ${minute}, kind, ${bin("advisedDelayMs")}, count(*), sum(advisedDelayMs), 0, 0, 0, 0
       FROM a WHERE advisedDelayMs IS NOT NULL GROUP BY 1, 2, 3, 4, 5`,
      `SELECT threadId, 'actual', ${minute}, kind, ${bin("max(0, retriedAt - noticeAt)")}, count(*), sum(max(0, retriedAt - noticeAt)), 0, 0,
         sum(coalesce(earlyByMs, 0) > 0), 0
       FROM a WHERE retriedAt IS NOT NULL GROUP BY 1, 2, 3, 4, 5`,
      `SELECT threadId, 'advisedRetried', ${minute}, kind, ${bin("advisedDelayMs")}, count(*), 0, 0, 0, 0, 0
       FROM a WHERE retriedAt IS NOT NULL AND advisedDelayMs IS NOT NULL GROUP BY 1, 2, 3, 4, 5`,
      // Retries the agent counted that no attempt row shows (a give-up it reported with its own
      // count), at the episode's end; its reported retry time with them when no row shows any.
      ...[["'attempt'", "''"], ["'threadWait'", "CAST(threadId AS TEXT)"]].map(
        ([fact, label]) => `SELECT threadId, ${fact}, ${minuteOf("coalesce(endedAt, startedAt)")}, kind, ${label}, unseen, ms, unseen, 0, 0, 0 FROM (
           SELECT threadId, kind, startedAt, endedAt, max(0, attemptsMade - 1 - coalesce(lastN, 0)) AS unseen,
             CASE WHEN lastN IS NULL THEN coalesce(reportedRetryMs, 0) ELSE 0 END AS ms FROM ep)
         WHERE unseen > 0 OR ms > 0`,
      ),
      // An outcome without an end time (none is written so) counts in metrics, never in a range.
      `SELECT ep.threadId, 'outcome', coalesce(${minuteOf("ep.endedAt")}, -1), ep.kind, ep.outcome, count(*), 0, 0, 0, 0, 0
       FROM ep WHERE ep.outcome IS NOT NULL GROUP BY 1, 2, 3, 4, 5`,
    );
  }
  if (eventWhere !== null) {
    // A narrower condition (ids, one thread) picks the rows through its own index: without the
    // `+`, SQLite would walk the type index over every retry ever stored, once per call.
    const retry = eventWhere === "1" ? `e.type = 'retry'` : `+e.type = 'retry'`;
    parts.push(
      `SELECT e.threadId, 'notice' AS fact, ${minuteOf("e.at")} AS minute, coalesce(e.kind, 'other') AS kind, '' AS label, count(*) AS n,
         0 AS ms, 0 AS waited, 0 AS judged, 0 AS early, 0 AS earlyMs
       FROM "Event" e WHERE ${retry} AND e.threadId IS NOT NULL AND (${eventWhere}) GROUP BY 1, 2, 3, 4, 5`,
    );
  }
  // The episodes are found once (`ep`), their attempts through them (`a`): a unit of work asking
  // for episodes not stored yet pays only for that lookup. CROSS JOIN keeps the facts outermost,
  // each finding its thread by id: left to itself, SQLite walks every thread that is not joined
  // (its index) to meet the few facts of a unit of work.
  return `WITH ep AS MATERIALIZED (
      SELECT ep.id, ep.threadId, ep.kind, ep.startedAt, ep.endedAt, ep.outcome, ep.attemptsMade, ep.reportedRetryMs,
        (SELECT max(x.n) FROM "Attempt" x WHERE x.episodeId = ep.id) AS lastN
      FROM "Episode" ep WHERE (${episodeWhere ?? "0"})),
    a AS MATERIALIZED (
      SELECT ep.threadId, ep.kind, ep.endedAt, a.noticeAt, a.advisedDelayMs, a.earlyByMs, ${RETRIED_AT_SQL} AS retriedAt
      FROM ep JOIN "Attempt" a ON a.episodeId = ep.id)
    SELECT f.fact, f.minute, f.kind, coalesce(t.provider, 'unknown') AS provider, coalesce(t.model, 'unknown') AS model,
      coalesce(t.agent, 'unknown') AS agent, t.sourceId, f.label,
      sum(f.n) AS n, sum(f.ms) AS ms, sum(f.waited) AS waited, sum(f.judged) AS judged, sum(f.early) AS early, sum(f.earlyMs) AS earlyMs
    FROM (${parts.join("\n    UNION ALL ")}) f CROSS JOIN "Thread" t ON t.id = f.threadId
    WHERE ${notJoinedSql()}
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8`;
}

const keyOf = (time: string) => `fact, ${time}, kind, provider, model, agent, sourceId, label`;
const KEY = keyOf("minute");
/** The hour of a minute column, minute -1 (no time) staying -1. */
const hourOfMinute = (column: string) => `CASE WHEN ${column} < 0 THEN ${column} ELSE ${column} - ${column} % ${HOUR_MS} END`;
const TOTAL_KEY = `fact, kind, provider, model, agent, label`;
const VALUES = ROLLUP_COUNTERS.join(", ");
const ADD = (columns: string) =>
  columns
    .split(", ")
    .map((c) => `${c} = ${c} + excluded.${c}`)
    .join(", ");

// Positional parameters (a fact row's key, then its signed counters): no object per upsert.
const UPSERT_ROLLUP = `INSERT INTO "Rollup" (${KEY}, ${VALUES})
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (${KEY}) DO UPDATE SET ${ADD(VALUES)}`;
const UPSERT_HOUR = `INSERT INTO "RollupHour" (${keyOf("hour")}, ${VALUES})
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (${keyOf("hour")}) DO UPDATE SET ${ADD(VALUES)}`;
const UPSERT_TOTAL = `INSERT INTO "MetricTotal" (${TOTAL_KEY}, ${VALUES})
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (${TOTAL_KEY}) DO UPDATE SET ${ADD(VALUES)}`;
const NOTICE_SEEN = `INSERT INTO "MetricTotal" (${TOTAL_KEY}, n)
  SELECT 'noticeSeen', @kind, coalesce(t.provider, 'unknown'), coalesce(t.model, 'unknown'), coalesce(t.agent, 'unknown'), '', @n
  FROM "Thread" t WHERE t.id = @threadId AND ${notJoinedSql()}
  ON CONFLICT (${TOTAL_KEY}) DO UPDATE SET n = n + excluded.n`;

/**
 * Each thread's finished waits of all time (its `threadWait` facts without their minute): what
 * no range of that thread can exceed but by a wait still open, the bound by which insights find
 * the top threads of a long range among the few largest instead of summing every thread.
 */
const UPSERT_THREAD_WAIT = `INSERT INTO "ThreadWaitTotal" (threadId, ms) VALUES (?, ?)
  ON CONFLICT (threadId) DO UPDATE SET ms = ms + excluded.ms`;

/** Adds (sign 1) or removes (sign -1) the facts the query selects, in both tables. */
function applyFacts(text: string, params: Record<string, unknown>, sign: 1 | -1): void {
  upsertFacts(statement(text).all(params) as FactRow[], sign);
}

const factKey = (row: FactRow) => `${row.fact}\0${row.minute}\0${row.kind}\0${row.provider}\0${row.model}\0${row.agent}\0${row.sourceId}\0${row.label}`;

/**
 * The difference between two sets of fact rows (new minus old), without the rows it leaves
 * unchanged: an episode that only grew by an attempt moves one minute's counters, not all of them.
 */
function factDifference(old: readonly FactRow[], now: readonly FactRow[]): FactRow[] {
  const byKey = new Map<string, FactRow>();
  for (const [rows, sign] of [[old, -1], [now, 1]] as const) {
    for (const row of rows) {
      const key = factKey(row);
      const sum = byKey.get(key);
      if (!sum) byKey.set(key, sign === 1 ? { ...row } : { ...row, n: -row.n, ms: -row.ms, waited: -row.waited, judged: -row.judged, early: -row.early, earlyMs: -row.earlyMs });
      else for (const counter of ROLLUP_COUNTERS) sum[counter] += sign * row[counter];
    }
  }
  return [...byKey.values()].filter((row) => ROLLUP_COUNTERS.some((counter) => row[counter] !== 0));
}

function upsertFacts(rows: readonly FactRow[], sign: 1 | -1): void {
  if (rows.length === 0) return;
  const [rollup, hour, total, threadWait] = [statement(UPSERT_ROLLUP), statement(UPSERT_HOUR), statement(UPSERT_TOTAL), statement(UPSERT_THREAD_WAIT)];
  for (const row of rows) {
    const { fact, minute, kind, provider, model, agent, sourceId, label } = row;
    const n = sign * row.n, ms = sign * row.ms, waited = sign * row.waited;
    const judged = sign * row.judged, early = sign * row.early, earlyMs = sign * row.earlyMs;
    rollup.run(fact, minute, kind, provider, model, agent, sourceId, label, n, ms, waited, judged, early, earlyMs);
    hour.run(fact, hourOf(minute), kind, provider, model, agent, sourceId, label, n, ms, waited, judged, early, earlyMs);
    if (!ROLLUP_ONLY_FACTS.includes(fact)) total.run(fact, kind, provider, model, agent, label, n, ms, waited, judged, early, earlyMs);
    if (fact === "threadWait") threadWait.run(Number(label), ms);
  }
}

const EPISODES = factsSql("(ep.threadId, ep.seq) IN (SELECT value ->> 0, value ->> 1 FROM json_each(@episodes))", null);
const THREAD_EPISODES = factsSql("ep.threadId = @threadId", null);
const THREAD_FACTS = factsSql("ep.threadId = @threadId", "e.threadId = @threadId");
const EVENT_NOTICES = factsSql(null, "e.id IN (SELECT value FROM json_each(@ids))");

/** The rollup statements of a unit of work (see unit-of-work.ts), called by the writers of the facts. */
export const rollupRows = {
  /**
   * Around the upserts of a unit of work's episodes ([threadId, seq] each): reads the stored
   * facts of those that had some (`stored`); the function it returns, called once all of them are
   * written, applies the difference between those facts and the new ones, one query each way
   * however many episodes there are, and only the rows that changed.
   */
  episodeFactsChange(stored: readonly (readonly [threadId: number, seq: number])[]): (written: readonly (readonly [threadId: number, seq: number])[]) => void {
    const old = stored.length ? (statement(EPISODES).all({ episodes: JSON.stringify(stored) }) as FactRow[]) : [];
    return (written) => {
      const now = written.length ? (statement(EPISODES).all({ episodes: JSON.stringify(written) }) as FactRow[]) : [];
      upsertFacts(factDifference(old, now), 1);
    };
  },

  /** Before a replay deletes a thread's episodes. */
  removeEpisodeFacts(threadId: number): void {
    applyFacts(THREAD_EPISODES, { threadId }, -1);
  },

  /**
   * Retry notices a unit of work stored (corrected facts; see noticesSeen for metrics), added
   * once for all of them under their threads' labels as saved at that moment.
   */
  noticeFacts(eventIds: readonly number[]): void {
    if (eventIds.length) applyFacts(EVENT_NOTICES, { ids: JSON.stringify(eventIds) }, 1);
  },

  /** Events about to be deleted (retention): their notices leave the corrected facts, not the seen counters. */
  removeNoticeFacts(idList: string): void {
    applyFacts(EVENT_NOTICES, { ids: idList }, -1);
  },

  /** A thread's labels changed: all its facts move from the old labels (-1, before) to the new (+1, after). */
  threadFacts(threadId: number, sign: 1 | -1): void {
    applyFacts(THREAD_FACTS, { threadId }, sign);
  },

  /** Monotonic counters of notices received, under the labels the thread has once the unit of work saved it. */
  noticesSeen(threadId: number, kinds: readonly string[]): void {
    const counts = new Map<string, number>();
    for (const kind of kinds) counts.set(kind, (counts.get(kind) ?? 0) + 1);
    for (const [kind, n] of counts) statement(NOTICE_SEEN).run({ threadId, kind, n });
  },
};

/**
 * Recomputes every rollup from the stored episodes, attempts and events, in the caller's
 * transaction. The counters of notices seen are filled only when there are none yet (the
 * migration, rows written around the writers): they count notices retention has since removed,
 * under the labels of their arrival, which the stored facts cannot tell again.
 */
export function rebuildRollups(sql: Sql): { rollups: number; hours: number; totals: number } {
  for (const text of rebuildStatements()) sql.exec(text);
  return {
    rollups: sql.prepare(`SELECT count(*) FROM "Rollup"`).pluck().get() as number,
    hours: sql.prepare(`SELECT count(*) FROM "RollupHour"`).pluck().get() as number,
    totals: sql.prepare(`SELECT count(*) FROM "MetricTotal"`).pluck().get() as number,
  };
}

/**
 * The whole rebuild in its own transaction, on either store (`npm run rollups -- rebuild`). It
 * sorts and materializes every fact of the history: on SQLite, in temporary files that may spill.
 */
export const { rebuildAllRollups } = onEitherStore(
  { rebuildAllRollups: () => serialized(() => withTempOnDisk(db().sql, () => db().sql.transaction(() => rebuildRollups(db().sql))())) },
  { rebuildAllRollups: postgres.rebuildRollups },
);

const notRollupOnly = `fact NOT IN (${ROLLUP_ONLY_FACTS.map((f) => `'${f}'`).join(", ")})`;

/** The hour rollups from the minute rollups (also the backfill of the migration that created them). */
export function rebuildHourStatements(): string[] {
  return [
    `DELETE FROM "RollupHour"`,
    `INSERT INTO "RollupHour" (${keyOf("hour")}, ${VALUES})
  SELECT fact, ${hourOfMinute("minute")}, kind, provider, model, agent, sourceId, label, ${VALUES.split(", ").map((v) => `sum(${v})`).join(", ")}
  FROM "Rollup" GROUP BY 1, 2, 3, 4, 5, 6, 7, 8`,
  ];
}

/** The threads' wait totals from the hour rollups (also the backfill of the migration that created them). */
export function rebuildThreadWaitStatements(): string[] {
  return [
    `DELETE FROM "ThreadWaitTotal"`,
    `INSERT INTO "ThreadWaitTotal" (threadId, ms) SELECT CAST(label AS INTEGER), sum(ms) FROM "RollupHour" WHERE fact = 'threadWait' GROUP BY label`,
  ];
}

/** The rebuild as plain SQL statements (also the backfill of the migration that created the tables). */
export function rebuildStatements(): string[] {
  return [
    `DELETE FROM "Rollup"`,
    `DELETE FROM "MetricTotal" WHERE fact <> 'noticeSeen'`,
    `INSERT INTO "Rollup" (${KEY}, ${VALUES}) ${factsSql("1", "1")}`,
    ...rebuildHourStatements(),
    ...rebuildThreadWaitStatements(),
    `INSERT INTO "MetricTotal" (${TOTAL_KEY}, ${VALUES})
  SELECT ${TOTAL_KEY}, sum(n), sum(ms), sum(waited), sum(judged), sum(early), sum(earlyMs) FROM "Rollup" WHERE ${notRollupOnly} GROUP BY ${TOTAL_KEY}`,
    `INSERT INTO "MetricTotal" (${TOTAL_KEY}, n)
  SELECT 'noticeSeen', kind, provider, model, agent, '', sum(n) FROM "Rollup"
  WHERE fact = 'notice' AND NOT EXISTS (SELECT 1 FROM "MetricTotal" WHERE fact = 'noticeSeen') GROUP BY 2, 3, 4, 5`,
  ];
}
