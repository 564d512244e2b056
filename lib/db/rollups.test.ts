import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { generator } from "@/e2e/support/seeded";
import type { NormalizedEvent, NormalizedLine } from "@/lib/ingest/types";
import { timeRange } from "@/lib/insights/range";
import { THREAD_STATUSES } from "@/lib/retry/types";

/**
 * Rollups equal the raw aggregation of the stored events, episodes and attempts, whatever wrote
 * them: random threads through the real pipeline on a real SQLite file, with events out of order
 * (replays), labels that change, watchdog passes, stops and retention.
 */
process.env.DATABASE_URL = `file:${path.join(fs.mkdtempSync(path.join(os.tmpdir(), "radar-rollups-")), "radar.db")}`;
process.env.RADAR_STOP_GRACE_MS = "60000";

type Modules = {
  pipeline: typeof import("@/lib/server/pipeline");
  tokens: typeof import("@/lib/server/tokens");
  client: typeof import("./client");
  rollups: typeof import("./rollups");
  retention: typeof import("./retention");
  metrics: typeof import("./metrics");
  insights: typeof import("./insights");
};
let m: Modules;
beforeAll(async () => {
  m = {
    pipeline: await import("@/lib/server/pipeline"),
    tokens: await import("@/lib/server/tokens"),
    client: await import("./client"),
    rollups: await import("./rollups"),
    retention: await import("./retention"),
    metrics: await import("./metrics"),
    insights: await import("./insights"),
  };
});

const KEY = ["fact", "minute", "kind", "provider", "model", "agent", "sourceId", "label"] as const;
const VALUES = ["n", "ms", "waited", "judged", "early", "earlyMs"] as const;

/** Rows of a table, without the all-zero ones a correction may leave, in one order. */
function nonZero(rows: Record<string, unknown>[], key: readonly string[]): string[] {
  return rows
    .filter((row) => VALUES.some((v) => row[v] !== 0))
    .map((row) => JSON.stringify([...key, ...VALUES].map((c) => row[c])))
    .sort();
}

function expectRollupsExact() {
  const sql = m.client.db().sql;
  const stored = sql.prepare(`SELECT * FROM "Rollup"`).all() as Record<string, unknown>[];
  const raw = sql.prepare(m.rollups.factsSql("1", "1")).all() as Record<string, unknown>[];
  expect(nonZero(stored, KEY)).toEqual(nonZero(raw, KEY));
  // The hour rollups are the same facts summed per hour (a fact without a time keeping -1).
  const hours = sql.prepare(`SELECT * FROM "RollupHour"`).all() as Record<string, unknown>[];
  const rawHours = sql
    .prepare(
      `SELECT fact, CASE WHEN minute < 0 THEN minute ELSE minute - minute % 3600000 END AS hour, kind, provider, model, agent, sourceId, label,
         ${VALUES.map((v) => `sum(${v}) AS ${v}`).join(", ")}
       FROM (${m.rollups.factsSql("1", "1")}) GROUP BY 1, 2, 3, 4, 5, 6, 7, 8`,
    )
    .all() as Record<string, unknown>[];
  const hourKey = KEY.map((k) => (k === "minute" ? "hour" : k));
  expect(nonZero(hours, hourKey)).toEqual(nonZero(rawHours, hourKey));
  const totals = sql.prepare(`SELECT * FROM "MetricTotal" WHERE fact <> 'noticeSeen'`).all() as Record<string, unknown>[];
  const rawTotals = sql
    .prepare(
      `SELECT fact, kind, provider, model, agent, label, ${VALUES.map((v) => `sum(${v}) AS ${v}`).join(", ")}
       FROM (${m.rollups.factsSql("1", null)}) WHERE fact <> 'threadWait' GROUP BY 1, 2, 3, 4, 5, 6`,
    )
    .all() as Record<string, unknown>[];
  const totalKey = KEY.filter((k) => k !== "minute" && k !== "sourceId");
  expect(nonZero(totals, totalKey)).toEqual(nonZero(rawTotals, totalKey));
  // Each thread's wait total is its threadWait facts of all time.
  const threadWaits = sql.prepare(`SELECT threadId, ms FROM "ThreadWaitTotal" WHERE ms <> 0 ORDER BY threadId`).all();
  const rawThreadWaits = sql
    .prepare(`SELECT CAST(label AS INTEGER) AS threadId, sum(ms) AS ms FROM (${m.rollups.factsSql("1", null)}) WHERE fact = 'threadWait' GROUP BY 1 HAVING sum(ms) <> 0 ORDER BY 1`)
    .all();
  expect(threadWaits).toEqual(rawThreadWaits);
}

describe("rollups", () => {
  it("equal the raw aggregation on random data, replays, label changes, the watchdog, stops and retention included", async () => {
    const rnd = generator(7);
    const source = await m.tokens.createSource("rollups", `rr_rollups_${Date.now()}`);
    const T0 = Date.UTC(2026, 10, 20, 12, 0, 0);
    let key = 0;
    const line = (event: Partial<NormalizedEvent>, receivedAt: number): NormalizedLine => ({
      index: 0,
      event: { type: "progress", at: receivedAt, threadId: "t", ...event } as NormalizedEvent,
      nativeType: null,
      format: "canonical",
      idempotencyKey: `r${++key}`,
      raw: event,
      receivedAt,
    });
    const providers = [["openai", "gpt-5"], ["anthropic", "claude-opus"], [null, null]] as const;
    const statuses = [429, 503, 500, 529];
    let clock = T0;
    for (let round = 0; round < 40; round++) {
      const batch: NormalizedLine[] = [];
      for (let i = 0; i < 1 + rnd.int(6); i++) {
        const threadId = `th-${rnd.int(8)}`;
        const [provider, model] = rnd.pick(providers);
        const agent = rnd.pick(["codex", "claude", null]);
        // Sometimes in the past: the thread replays from its stored events.
        const at = clock - (rnd.next() < 0.15 ? rnd.int(10) * 60_000 : 0) + rnd.int(90_000);
        const turnId = `u${rnd.int(3)}`;
        const type = rnd.pick(["retry", "retry", "retry", "attempt", "progress", "turn.started", "turn.completed", "turn.failed"] as const);
        const event: Partial<NormalizedEvent> = { threadId, type, at, turnId, provider, model, agent };
        if (type === "retry") Object.assign(event, { attempt: 1 + rnd.int(4), delayMs: rnd.pick([null, 500, 2_000, 30_000]), error: { httpStatus: rnd.pick(statuses) } });
        if (type === "attempt") event.attempt = 1 + rnd.int(4);
        batch.push(line(event, clock + 120_000));
      }
      clock += rnd.int(5) * 60_000;
      await m.pipeline.ingestLines(source, batch, clock + 120_000);
      expectRollupsExact();
      if (round % 5 === 4) {
        // The watchdog's pass, far enough ahead for deadlines to end episodes.
        const ids = m.client.db().sql.prepare(`SELECT id FROM "Thread"`).pluck().all() as number[];
        await m.pipeline.tickThreads(ids, clock + 3_600_000);
        expectRollupsExact();
      }
      if (round % 7 === 6) {
        const id = m.client.db().sql.prepare(`SELECT id FROM "Thread" ORDER BY random() LIMIT 1`).pluck().get() as number;
        await m.pipeline.withInternalEvents(clock + 120_000, async (apply) => {
          await apply(id, { type: "stop.requested", actor: "operator", reason: "test" });
        });
        expectRollupsExact();
      }
    }
    let lost = 0;
    // Insights from the rollups (whole hours, whole minutes, raw edges, waits cut at the horizon)
    // equal insights from the raw facts: a filter naming every status means the same threads but
    // sends every chart to the raw facts.
    for (const [from, to, now] of [
      [T0 - 3_600_000, clock + 7_200_000, clock + 7_200_000],
      [T0 + 1_234_567, clock - 1_800_000 + 4_321, clock + 600_000],
      [T0 + 3_599_999, T0 + 3 * 3_600_000 + 59_999, clock],
      [T0 - 7_200_000 + 1_234, clock + 10_800_000, clock - 600_000],
    ]) {
      for (const kind of [undefined, ["capacity", "rate_limit"] as const]) {
        const query = { filter: { kind: kind && [...kind] }, range: timeRange("custom", from, to), split: "kind" as const };
        const rolled = await m.insights.insights(query, now);
        const raw = await m.insights.insights({ ...query, filter: { ...query.filter, status: [...THREAD_STATUSES] } }, now);
        expect(rolled).toEqual(raw);
        lost += rolled.totals.timeLostMs;
      }
    }

    expect(lost).toBeGreaterThan(0);

    const notices = m.client.db().sql.prepare(`SELECT count(*) FROM "Event" WHERE type = 'retry'`).pluck().get() as number;
    expect(notices).toBeGreaterThan(20);
    const seen = async () => (await m.metrics.metricsSnapshot(Date.now())).notices.reduce((sum, row) => sum + row.value, 0);
    expect(await seen()).toBe(notices);

    // Retention removes notices from the corrected facts, never from the counters of notices seen.
    await m.retention.pruneEvents(Number.MAX_SAFE_INTEGER, m.retention.PRUNE_START, 1_000_000);
    expectRollupsExact();
    expect(await seen()).toBe(notices);

    // The rebuild recomputes the same rows.
    const sql = m.client.db().sql;
    const before = nonZero(sql.prepare(`SELECT * FROM "Rollup"`).all() as Record<string, unknown>[], KEY);
    const hourKey = KEY.map((k) => (k === "minute" ? "hour" : k));
    const hoursBefore = nonZero(sql.prepare(`SELECT * FROM "RollupHour"`).all() as Record<string, unknown>[], hourKey);
    sql.transaction(() => m.rollups.rebuildRollups(sql))();
    expect(nonZero(sql.prepare(`SELECT * FROM "Rollup"`).all() as Record<string, unknown>[], KEY)).toEqual(before);
    expect(nonZero(sql.prepare(`SELECT * FROM "RollupHour"`).all() as Record<string, unknown>[], hourKey)).toEqual(hoursBefore);
    expectRollupsExact();
    expect(await seen()).toBe(notices);
  });
});
