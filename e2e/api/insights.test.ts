import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INCIDENT_SPAN_MS, incidentEvents } from "@/lib/insights/incident-fixture";
import type { InsightsData } from "@/lib/insights/types";
import { get, post, startServer, type RunningServer } from "../support/server";

/**
 * The insights data endpoint and page against the built app: a known incident goes in through
 * the real ingestion API, and every chart's numbers come back out (lib/insights/incident-fixture.ts
 * says what happened, so each number below can be checked by hand).
 */
const MINUTE = 60_000;
// Two days ago, on a whole minute: a past range, so the permalink must never change.
const T0 = Math.floor((Date.now() - 2 * 86_400_000) / MINUTE) * MINUTE;
const iso = (ms: number) => new Date(ms).toISOString();
const RANGE = `from=${iso(T0)}&to=${iso(T0 + INCIDENT_SPAN_MS)}`;
const minute = (n: number) => iso(T0 + n * MINUTE);

let server: RunningServer;
let sourceId: string;

beforeAll(async () => {
  server = await startServer();
  const events = incidentEvents(T0);
  const response = await post(server, "/api/v1/events", events);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(response.body.accepted).toBe(events.length);
  sourceId = (await get(server, "/api/v1/threads/inc-a")).body.thread.sourceId;
});
afterAll(async () => {
  await server?.stop();
});

async function insights(query: string): Promise<InsightsData> {
  const response = await get(server, `/api/v1/insights?${query}`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

const nonZero = (buckets: InsightsData["notices"]["buckets"]) =>
  Object.fromEntries(buckets.filter((b) => b.total > 0).map((b) => [b.at, b.counts]));

describe("retry notices per minute", () => {
  it("are stacked by kind over the incident's minutes", async () => {
    const data = await insights(RANGE);
    expect(data.range).toMatchObject({ preset: "custom", from: iso(T0), to: iso(T0 + INCIDENT_SPAN_MS), bucket: "minute", bucketMs: MINUTE });
    expect(data.notices.buckets).toHaveLength(10);
    expect(data.notices.series).toEqual(["rate_limit", "capacity", "transport"]);
    expect(nonZero(data.notices.buckets)).toEqual({
      [minute(1)]: { rate_limit: 1, capacity: 1, transport: 0 },
      [minute(2)]: { rate_limit: 1, capacity: 1, transport: 0 },
      [minute(3)]: { rate_limit: 1, capacity: 0, transport: 2 },
    });
    expect(data.totals.notices).toBe(7);
  });

  it.each([
    ["provider", { openai: 4, anthropic: 3 }],
    ["model", { "gpt-5": 2, "gpt-5-mini": 2, "claude-opus": 3 }],
  ])("split by %s", async (split, totals) => {
    const data = await insights(`${RANGE}&split=${split}`);
    const sums: Record<string, number> = {};
    for (const bucket of data.notices.buckets) for (const [series, n] of Object.entries(bucket.counts)) sums[series] = (sums[series] ?? 0) + n;
    expect(data.split).toBe(split);
    expect(sums).toEqual(totals);
  });

  it.each([
    ["provider", "provider=anthropic", 3],
    ["model", "model=gpt-5,gpt-5-mini", 4],
    ["kind (of the notice itself)", "kind=transport", 2],
    ["source", () => `source=${sourceId}`, 7],
    ["search", "q=capacity refactor", 2],
    ["thread status", "status=completed", 2],
  ])("follow the board filter: %s", async (_name, filter, total) => {
    const data = await insights(`${RANGE}&${typeof filter === "function" ? filter() : filter}`);
    expect(data.totals.notices).toBe(total);
  });
});

describe("episode outcomes", () => {
  it("count episodes by outcome where they ended, with the recovery ratio", async () => {
    const data = await insights(RANGE);
    expect(data.outcomes.series).toEqual(["recovered", "exhausted", "failed"]);
    expect(Object.fromEntries(data.outcomes.buckets.filter((b) => b.total).map((b) => [b.at, [b.counts, b.recoveryRatio]]))).toEqual({
      [minute(2)]: [{ recovered: 1, exhausted: 0, failed: 1 }, 0.5],
      [minute(3)]: [{ recovered: 1, exhausted: 1, failed: 0 }, 0.5],
    });
    expect(data.totals).toMatchObject({ episodesEnded: 4, episodesOpen: 0, recoveryRatio: 0.5 });
  });
});

describe("time lost waiting", () => {
  it("sums each retry's backoff by provider and model", async () => {
    const data = await insights(RANGE);
    expect(data.timeLost).toEqual([
      { provider: "openai", model: "gpt-5-mini", attempts: 2, timeLostMs: 40_000 + 10_000 },
      { provider: "openai", model: "gpt-5", attempts: 2, timeLostMs: 230 + 2_000 },
      { provider: "anthropic", model: "claude-opus", attempts: 3, timeLostMs: 400 + 1_000 + 0 },
    ]);
    expect(data.totals.timeLostMs).toBe(53_630);
  });

  it("ranks the threads that lost most, with what their thread page link needs", async () => {
    const data = await insights(RANGE);
    expect(data.topThreads.map((t) => [t.threadId, t.sourceId, t.attempts, t.timeLostMs, t.status])).toEqual([
      ["inc-b", sourceId, 2, 50_000, "failed"],
      ["inc-a", sourceId, 2, 2_230, "completed"],
      ["inc-c", sourceId, 3, 1_400, "broken"],
    ]);
  });
});

describe("advised vs actual gap", () => {
  it("bins advised delays and actual gaps, early retries apart", async () => {
    const data = await insights(RANGE);
    expect(data.gaps.bins.filter((b) => b.advised || b.actual).map((b) => [b.label, b.advised, b.actual, b.early])).toEqual([
      ["≤ 250 ms", 0, 1, 1], // inc-a retry 1: 0.23 s after a 2 s advice
      ["≤ 500 ms", 0, 1, 1], // inc-c retry 1: 0.4 s after 1 s
      ["≤ 1 s", 1, 1, 0], // inc-c's 502 retry (no advice) and the 1 s advice
      ["≤ 2 s", 2, 1, 0], // inc-a: two 2 s advices, retry 2 on time
      ["≤ 10 s", 0, 1, 1], // inc-b retry 2: 10 s after 30 s
      ["≤ 30 s", 2, 0, 0], // inc-b: two 30 s advices
      ["≤ 1 min", 0, 1, 0], // inc-b retry 1: 40 s
    ]);
  });

  it("gives each agent's share of early retries", async () => {
    const data = await insights(RANGE);
    expect(data.earlyByAgent).toEqual([
      { agent: "claude", attempts: 1, early: 1, share: 1, avgEarlyByMs: 600 },
      { agent: "codex", attempts: 4, early: 2, share: 0.5, avgEarlyByMs: (1_770 + 20_000) / 2 },
    ]);
    expect(data.totals).toMatchObject({ attemptsJudged: 5, attemptsEarly: 3, earlyShare: 0.6 });
  });
});

describe("the incident permalink", () => {
  it("returns the same numbers every time", async () => {
    const { serverTime: _first, ...first } = (await get(server, `/api/v1/insights?${RANGE}`)).body;
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const { serverTime: _second, ...second } = (await get(server, `/api/v1/insights?${RANGE}`)).body;
    expect(second).toEqual(first);
  });

  it("renders the page with each chart's table fallback and the thread links", async () => {
    const response = await server.fetch(`${server.url}/insights?${RANGE}`);
    expect(response.status).toBe(200);
    const html = await response.text();
    for (const id of ["notices", "outcomes", "time-lost", "gaps", "early-agents"]) expect(html).toContain(`data-testid="chart-${id}-table"`);
    const row = html.match(new RegExp(`<tr data-bucket="${minute(3)}".*?</tr>`))?.[0] ?? "";
    expect(row).toMatch(/data-series="rate_limit">1</);
    expect(row).toMatch(/data-series="transport">2</);
    expect(row).toMatch(/data-series="total">3</);
    expect(html).toContain(`href="/threads/inc-b?source=${encodeURIComponent(sourceId)}"`);
    expect(html).toMatch(/data-testid="recovery-ratio">50 %</);
  });

  it("an empty range answers zeros, not errors", async () => {
    const data = await insights(`from=${iso(T0 - 7 * 86_400_000)}&to=${iso(T0 - 6 * 86_400_000)}`);
    expect(data.totals).toMatchObject({ notices: 0, episodesEnded: 0, recoveryRatio: null, timeLostMs: 0, earlyShare: null });
    expect(data.range.bucket).toBe("hour");
  });
});

describe("presets and bad queries", () => {
  it.each([
    ["1h", "minute"],
    ["24h", "hour"],
    ["7d", "hour"],
  ])("range=%s is relative to now, per %s", async (range, bucket) => {
    const asked = Date.now();
    const data = await insights(`range=${range}`);
    expect(data.range).toMatchObject({ preset: range, bucket });
    // "now" as the server saw it (at most a minute's rounding before the request was sent).
    expect(asked - Date.parse(data.range.to)).toBeLessThan(60_000);
  });

  it.each([
    ["an unknown preset", "range=2w", "range: expected 1h, 24h or 7d"],
    ["from after to", `from=${iso(T0)}&to=${iso(T0 - MINUTE)}`, "from: must be before to"],
    ["an unknown kind", "kind=teapot", "kind"],
  ])("%s is a 400 saying what is wrong", async (_name, query, detail) => {
    const response = await get(server, `/api/v1/insights?${query}`);
    expect(response.status).toBe(400);
    expect(response.body.detail).toContain(detail);
  });
});
