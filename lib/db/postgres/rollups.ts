import type pg from "pg";
import { arrayLiteral, type ArrayElement } from "./array-literal";
import { gapBinSql } from "../fact-sql";
import { HOUR_MS, hourOf, MINUTE_MS, ROLLUP_COUNTERS, ROLLUP_ONLY_FACTS, type FactRow } from "../records/rollups";
import { inTransaction } from "./pool";
import { msFromTimestamp, timestampFromMs } from "./time";

/**
 * lib/db/rollups.ts's unit-of-work statements on PostgreSQL: the same facts (see factsSql there
 * for what each one counts), the same differences applied in the unit of work that changes them.
 * The facts are computed in epoch ms (times are read through msFromTimestamp once, in the CTE), so
 * every sum and bin is SQLite's to the millisecond; the upserts are multi-row (arrays unnested),
 * one statement per table, their rows summed per key first (one INSERT … ON CONFLICT may not meet
 * the same key twice).
 */

const minuteOf = (ms: string) => `(${ms} - ${ms} % ${MINUTE_MS})`;
const bin = (expression: string) => `(${gapBinSql(expression)})::text`;
/** SQLite's scalar max(0, x); x is never null where it is used (or only inside a sum, where 0 and null add the same). */
const atLeast0 = (expression: string) => `GREATEST(0, ${expression})`;

/**
 * Fact rows (fact, minute in epoch ms, labels, sourceId, label and the counters) of the episodes
 * matching `episodeWhere` (alias `ep`) and the retry notices matching `eventWhere` (alias `e`); null
 * leaves that part out. What lib/db/rollups.ts's factsSql selects, in PostgreSQL's dialect.
 *
 * `few`: the conditions name a unit of work's few rows. Their attempts, notices and threads are
 * then read by index, one lookup each, whatever the statistics say; joined as for the whole table
 * (the rebuild), the planner trusting statistics taken when the tables were small scans every
 * attempt and thread per unit of work (lib/db/postgres/plans.pg.test.ts).
 */
export function factsSql(episodeWhere: string | null, eventWhere: string | null, few = false): string {
  const minute = minuteOf(`"noticeAt"`);
  const wait = atLeast0(`coalesce("retriedAt", "endedAt") - "noticeAt"`);
  const parts: string[] = [];
  if (episodeWhere !== null) {
    const attemptCounters = `count(*), coalesce(sum(${wait}), 0), count(coalesce("retriedAt", "endedAt")),
         count(*) FILTER (WHERE "advisedDelayMs" IS NOT NULL AND "retriedAt" IS NOT NULL), count(*) FILTER (WHERE coalesce("earlyByMs", 0) > 0),
         coalesce(sum(CASE WHEN "earlyByMs" > 0 THEN "earlyByMs" END), 0)`;
    parts.push(
      `SELECT "threadId", 'attempt', ${minute}, kind, '', ${attemptCounters} FROM a GROUP BY 1, 2, 3, 4, 5`,
      `SELECT "threadId", 'threadWait', ${minute}, kind, "threadId"::text, ${attemptCounters} FROM a GROUP BY 1, 2, 3, 4, 5`,
      `SELECT "threadId", 'advised', ${minute}, kind, ${bin(`"advisedDelayMs"`)}, count(*), sum("advisedDelayMs"), 0, 0, 0, 0
       FROM a WHERE "advisedDelayMs" IS NOT NULL GROUP BY 1, 2, 3, 4, 5`,
      `SELECT "threadId", 'actual', ${minute}, kind, ${bin(atLeast0(`"retriedAt" - "noticeAt"`))}, count(*), sum(${atLeast0(`"retriedAt" - "noticeAt"`)}), 0, 0,
         count(*) FILTER (WHERE coalesce("earlyByMs", 0) > 0), 0
       FROM a WHERE "retriedAt" IS NOT NULL GROUP BY 1, 2, 3, 4, 5`,
      `SELECT "threadId", 'advisedRetried', ${minute}, kind, ${bin(`"advisedDelayMs"`)}, count(*), 0, 0, 0, 0, 0
       FROM a WHERE "retriedAt" IS NOT NULL AND "advisedDelayMs" IS NOT NULL GROUP BY 1, 2, 3, 4, 5`,
      // Retries the agent counted that no attempt row shows, as lib/db/rollups.ts's factsSql.
      ...[[`'attempt'`, `''`], [`'threadWait'`, `ep."threadId"::text`]].map(
        ([fact, label]) => `SELECT ep."threadId", ${fact}, ${minuteOf(msFromTimestamp(`coalesce(ep."endedAt", ep."startedAt")`))}, ep.kind, ${label},
           u.unseen, u.ms, u.unseen, 0, 0, 0
         FROM "Episode" ep CROSS JOIN LATERAL (
           SELECT GREATEST(0, ep."attemptsMade" - 1 - coalesce(max(x.n), 0)) AS unseen,
             CASE WHEN max(x.n) IS NULL THEN coalesce(ep."reportedRetryMs", 0) ELSE 0 END AS ms
           FROM "Attempt" x WHERE x."episodeId" = ep.id) u
         WHERE (${episodeWhere}) AND (u.unseen > 0 OR u.ms > 0)`,
      ),
      `SELECT ep."threadId", 'outcome', coalesce(${minuteOf(msFromTimestamp(`ep."endedAt"`))}, -1), ep.kind, ep.outcome, count(*), 0, 0, 0, 0, 0
       FROM "Episode" ep WHERE (${episodeWhere}) AND ep.outcome IS NOT NULL GROUP BY 1, 2, 3, 4, 5`,
    );
  }
  if (eventWhere !== null) {
    parts.push(
      `SELECT e."threadId", 'notice', ${minuteOf(msFromTimestamp("e.at"))}, coalesce(e.kind, 'other'), '', count(*), 0, 0, 0, 0, 0
       FROM ${few ? `(SELECT * FROM "Event" e WHERE ${eventWhere} OFFSET 0) e WHERE` : `"Event" e WHERE (${eventWhere}) AND`} e.type = 'retry' AND e."threadId" IS NOT NULL
       GROUP BY 1, 2, 3, 4, 5`,
    );
  }
  return `WITH a AS MATERIALIZED (
      SELECT ep."threadId", ep.kind, ${msFromTimestamp(`ep."endedAt"`)} AS "endedAt", ${msFromTimestamp(`a."noticeAt"`)} AS "noticeAt",
        a."advisedDelayMs"::bigint AS "advisedDelayMs", a."earlyByMs"::bigint AS "earlyByMs",
        ${msFromTimestamp(`coalesce(a."startedAt", min(a."noticeAt") OVER (PARTITION BY a."episodeId" ORDER BY a.n ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING))`)} AS "retriedAt"
      FROM ${few ? `"Episode" ep CROSS JOIN LATERAL (SELECT * FROM "Attempt" x WHERE x."episodeId" = ep.id OFFSET 0) a` : `"Attempt" a JOIN "Episode" ep ON ep.id = a."episodeId"`}
      WHERE (${episodeWhere ?? "false"}))
    SELECT f.fact, f.minute::bigint AS minute, f.kind, coalesce(t.provider, 'unknown') AS provider, coalesce(t.model, 'unknown') AS model,
      coalesce(t.agent, 'unknown') AS agent, t."sourceId", f.label,
      ${["n", "ms", "waited", "judged", "early", "earlyMs"].map((c) => `sum(f."${c}")::bigint AS "${c}"`).join(", ")}
    FROM (${parts.join("\n    UNION ALL ")}) AS f("threadId", fact, minute, kind, label, n, ms, waited, judged, early, "earlyMs")
    ${few ? `CROSS JOIN LATERAL (SELECT * FROM "Thread" t WHERE t.id = f."threadId" AND t."joinedTo" IS NULL OFFSET 0) t` : `JOIN "Thread" t ON t.id = f."threadId" WHERE t."joinedTo" IS NULL`}
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8`;
}

// The episodes' ids found key by key (a LATERAL lookup on the (threadId, seq) index) and given as an
// array: their rows and attempts are then read by index, whatever the statistics say, instead of a
// scan of every episode and attempt per unit of work (lib/db/postgres/plans.pg.test.ts).
const EPISODES = factsSql(
  `ep.id = ANY(ARRAY(SELECT e.id FROM unnest($1::int[], $2::int[]) k(t, s) CROSS JOIN LATERAL (SELECT id FROM "Episode" WHERE "threadId" = k.t AND seq = k.s LIMIT 1) e))`,
  null,
  true,
);
const THREAD_EPISODES = factsSql(`ep."threadId" = $1`, null, true);
const THREAD_FACTS = factsSql(`ep."threadId" = $1`, `e."threadId" = $1`, true);
const EVENT_NOTICES = factsSql(null, `e.id = ANY($1::bigint[])`, true);
export const UNIT_OF_WORK_FACTS_SQL = { EPISODES, EVENT_NOTICES };

const VALUES = ROLLUP_COUNTERS;
const q = (column: string) => `"${column}"`;

/** One multi-row upsert adding each row's counters to its key's, from parallel arrays. */
function upsertSql(table: string, key: { column: string; type: string; time?: boolean }[]): string {
  const columns = [...key.map((k) => k.column), ...VALUES];
  const types = [...key.map((k) => k.type), ...VALUES.map(() => "bigint")];
  const selected = columns.map((column, i) => (key[i]?.time ? `${timestampFromMs(q(column))}` : q(column)));
  return `INSERT INTO "${table}" AS old (${columns.map(q).join(", ")})
    SELECT ${selected.join(", ")} FROM unnest(${types.map((type, i) => `$${i + 1}::${type}[]`).join(", ")}) AS r(${columns.map(q).join(", ")})
    ON CONFLICT (${key.map((k) => q(k.column)).join(", ")}) DO UPDATE SET ${VALUES.map((v) => `${q(v)} = old.${q(v)} + excluded.${q(v)}`).join(", ")}`;
}

const text = (column: string) => ({ column, type: "text" });
const LABELS = ["kind", "provider", "model", "agent"].map(text);
const UPSERT_ROLLUP = upsertSql("Rollup", [text("fact"), { column: "minute", type: "bigint", time: true }, ...LABELS, text("sourceId"), text("label")]);
const UPSERT_HOUR = upsertSql("RollupHour", [text("fact"), { column: "hour", type: "bigint", time: true }, ...LABELS, text("sourceId"), text("label")]);
const UPSERT_TOTAL = upsertSql("MetricTotal", [text("fact"), ...LABELS, text("label")]);
const UPSERT_THREAD_WAIT = `INSERT INTO "ThreadWaitTotal" AS old ("threadId", ms) SELECT * FROM unnest($1::int[], $2::bigint[])
  ON CONFLICT ("threadId") DO UPDATE SET ms = old.ms + excluded.ms`;
const THREAD_LABELS = `SELECT id, coalesce(provider, 'unknown') AS provider, coalesce(model, 'unknown') AS model, coalesce(agent, 'unknown') AS agent
  FROM "Thread" WHERE id = ANY($1::int[]) AND "joinedTo" IS NULL`;
const NONE: Counters = { n: 0, ms: 0, waited: 0, judged: 0, early: 0, earlyMs: 0 };

type Counters = Pick<FactRow, (typeof VALUES)[number]>;

/** Rows summed per key (the key's parts in order), as the parallel arrays of an upsert. */
class Summed {
  private readonly rows = new Map<string, { key: ArrayElement[]; counters: Counters }>();
  add(key: ArrayElement[], counters: Counters): void {
    const id = JSON.stringify(key);
    const found = this.rows.get(id);
    if (!found) this.rows.set(id, { key, counters: { ...counters } });
    else for (const v of VALUES) found.counters[v] += counters[v];
  }
  get size(): number {
    return this.rows.size;
  }
  /** In the order of their keys: every unit of work locks the rows it changes in that one order. */
  arrays(): ArrayElement[][] {
    const rows = [...this.rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
    const keyLength = rows[0]?.key.length ?? 0;
    return [
      ...Array.from({ length: keyLength }, (_, i) => rows.map((row) => row.key[i])),
      ...VALUES.map((v) => rows.map((row) => row.counters[v])),
    ];
  }
}

export type RollupRowsOn = ReturnType<typeof rollupRowsOn>;

/**
 * The rollup statements of one unit of work on `client` (the SQLite ones' signatures, answering
 * promises). The facts are computed when asked (they read the rows as they are then), but the
 * counters they change are summed here and written by `flush`, at the end of the unit of work,
 * each table's rows in the order of their keys. These rows are shared by every thread: taken
 * last and in one order, they cannot close a deadlock with another instance's unit of work that
 * holds a thread this one is waiting for (locks.ts).
 */
export function rollupRowsOn(client: pg.ClientBase) {
  let [rollup, hour, total] = [new Summed(), new Summed(), new Summed()];
  let threadWait = new Map<number, number>();

  /** Adds (sign 1) or removes (sign -1) the facts the query selects, in every table that keeps them. */
  async function applyFacts(sql: string, params: unknown[], sign: 1 | -1): Promise<void> {
    const { rows } = await client.query<FactRow>(sql, params);
    for (const row of rows) {
      const { fact, minute, kind, provider, model, agent, sourceId, label } = row;
      const counters = { n: sign * row.n, ms: sign * row.ms, waited: sign * row.waited, judged: sign * row.judged, early: sign * row.early, earlyMs: sign * row.earlyMs };
      rollup.add([fact, minute, kind, provider, model, agent, sourceId, label], counters);
      hour.add([fact, hourOf(minute), kind, provider, model, agent, sourceId, label], counters);
      if (!ROLLUP_ONLY_FACTS.includes(fact)) total.add([fact, kind, provider, model, agent, label], counters);
      if (fact === "threadWait") threadWait.set(Number(label), (threadWait.get(Number(label)) ?? 0) + counters.ms);
    }
  }

  /** Notices seen, counted under each thread's labels as they are now (one read for all the threads). */
  async function noticesSeenOf(seen: readonly (readonly [threadId: number, kinds: readonly string[]])[]): Promise<void> {
    const ids = [...new Set(seen.filter(([, kinds]) => kinds.length).map(([threadId]) => threadId))];
    if (!ids.length) return;
    // The threads' labels now: a later relabel in this unit of work moves only what was counted before it.
    const { rows } = await client.query<{ id: number; provider: string; model: string; agent: string }>(THREAD_LABELS, [ids]);
    const labels = new Map(rows.map((row) => [row.id, row]));
    for (const [threadId, kinds] of seen) {
      const found = labels.get(threadId);
      if (!found) continue;
      for (const kind of kinds) total.add(["noticeSeen", kind, found.provider, found.model, found.agent, ""], { ...NONE, n: 1 });
    }
  }

  return {
    noticesSeen: (threadId: number, kinds: readonly string[]) => noticesSeenOf([[threadId, kinds]]),
    noticesSeenOf,

    async episodeFacts(episodes: readonly (readonly [threadId: number, seq: number])[], sign: 1 | -1): Promise<void> {
      if (episodes.length) await applyFacts(EPISODES, [episodes.map(([threadId]) => threadId), episodes.map(([, seq]) => seq)], sign);
    },

    async removeEpisodeFacts(threadId: number): Promise<void> {
      await applyFacts(THREAD_EPISODES, [threadId], -1);
    },

    async noticeFacts(eventIds: readonly number[]): Promise<void> {
      if (eventIds.length) await applyFacts(EVENT_NOTICES, [eventIds], 1);
    },

    /** Events about to be deleted (retention): their notices leave the rollups. */
    async removeNoticeFacts(eventIds: readonly number[]): Promise<void> {
      if (eventIds.length) await applyFacts(EVENT_NOTICES, [eventIds], -1);
    },

    async threadFacts(threadId: number, sign: 1 | -1): Promise<void> {
      await applyFacts(THREAD_FACTS, [threadId], sign);
    },

    /** Writes the counters summed so far (see above); the unit of work calls it last, before its commit. */
    async flush(): Promise<void> {
      const [rollups, hours, totals, waits] = [rollup, hour, total, threadWait];
      [rollup, hour, total, threadWait] = [new Summed(), new Summed(), new Summed(), new Map()];
      if (rollups.size) await client.query(UPSERT_ROLLUP, rollups.arrays().map(arrayLiteral));
      if (hours.size) await client.query(UPSERT_HOUR, hours.arrays().map(arrayLiteral));
      if (totals.size) await client.query(UPSERT_TOTAL, totals.arrays().map(arrayLiteral));
      const threads = [...waits.keys()].sort((a, b) => a - b);
      if (threads.length) await client.query(UPSERT_THREAD_WAIT, [threads, threads.map((id) => waits.get(id)!)]);
    },
  };
}

const REBUILD_TABLES = `"Rollup", "RollupHour", "MetricTotal", "ThreadWaitTotal"`;
const COUNTERS = VALUES.map(q).join(", ");
const SUMS = VALUES.map((v) => `sum(${q(v)})`).join(", ");
const TOTAL_COLUMNS = `fact, kind, provider, model, agent, label`;
const minuteMs = msFromTimestamp("minute");
// A fact without a time (minute -1) keeps it in the hours too, as hourOf does.
const hourMs = `CASE WHEN ${minuteMs} < 0 THEN ${minuteMs} ELSE ${minuteMs} - ${minuteMs} % ${HOUR_MS} END`;

/** lib/db/rollups.ts's rebuild (rebuildStatements there says what each step keeps), in PostgreSQL's dialect. */
const REBUILD = [
  `DELETE FROM "Rollup"`,
  `DELETE FROM "MetricTotal" WHERE fact <> 'noticeSeen'`,
  `INSERT INTO "Rollup" (fact, minute, kind, provider, model, agent, "sourceId", label, ${COUNTERS})
    SELECT fact, ${timestampFromMs("minute")}, kind, provider, model, agent, "sourceId", label, ${COUNTERS} FROM (${factsSql("true", "true")}) f`,
  `DELETE FROM "RollupHour"`,
  `INSERT INTO "RollupHour" (fact, hour, kind, provider, model, agent, "sourceId", label, ${COUNTERS})
    SELECT fact, ${timestampFromMs(hourMs)}, kind, provider, model, agent, "sourceId", label, ${SUMS} FROM "Rollup" GROUP BY 1, 2, 3, 4, 5, 6, 7, 8`,
  `DELETE FROM "ThreadWaitTotal"`,
  `INSERT INTO "ThreadWaitTotal" ("threadId", ms) SELECT label::int, sum(ms) FROM "RollupHour" WHERE fact = 'threadWait' GROUP BY label`,
  `INSERT INTO "MetricTotal" (${TOTAL_COLUMNS}, ${COUNTERS})
    SELECT ${TOTAL_COLUMNS}, ${SUMS} FROM "Rollup" WHERE fact <> ALL($1::text[]) GROUP BY ${TOTAL_COLUMNS}`,
  `INSERT INTO "MetricTotal" (${TOTAL_COLUMNS}, n)
    SELECT 'noticeSeen', kind, provider, model, agent, '', sum(n) FROM "Rollup"
    WHERE fact = 'notice' AND NOT EXISTS (SELECT 1 FROM "MetricTotal" WHERE fact = 'noticeSeen') GROUP BY 2, 3, 4, 5`,
];

/**
 * Recomputes every rollup from the stored facts, in one transaction. The tables are locked first
 * (units of work of other instances wait to write their differences until the rebuild commits,
 * and then add them to the rebuilt rows), so no difference is lost or counted twice.
 */
export async function rebuildRollups(): Promise<{ rollups: number; hours: number; totals: number }> {
  return inTransaction(async (client) => {
    await client.query(`LOCK TABLE ${REBUILD_TABLES} IN EXCLUSIVE MODE`);
    for (const text of REBUILD) await client.query(text, text.includes("$1") ? [ROLLUP_ONLY_FACTS] : []);
    const count = async (table: string) => (await client.query<{ n: number }>(`SELECT count(*) AS n FROM "${table}"`)).rows[0].n;
    return { rollups: await count("Rollup"), hours: await count("RollupHour"), totals: await count("MetricTotal") };
  });
}
