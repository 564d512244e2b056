import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GAP_BOUNDS_MS } from "@/lib/insights/gaps";
import { parseInsightsQuery } from "@/lib/insights/range";
import type { DatabaseHandles } from "./client";
import { gapBinSql } from "./fact-sql";
import { M, NOW, openSeeded, RANGE, T0 } from "./fixture";
import { insights } from "./insights";

/** The insights SQL against a real migrated SQLite file with the small, hand-computed data set of fixture.ts. */

let handles: DatabaseHandles;
let close: () => Promise<void>;

beforeAll(() => {
  ({ handles, close } = openSeeded());
});

afterAll(() => close());

function run(search: string) {
  const parsed = parseInsightsQuery(new URLSearchParams(search), NOW);
  if (!parsed.ok) throw new Error(parsed.error);
  return insights(parsed.query, NOW, handles.sql);
}

const nonZero = (buckets: { at: string; counts: Record<string, number> }[]) =>
  buckets.flatMap((b) => Object.entries(b.counts).filter(([, n]) => n > 0).map(([series, n]) => `${b.at.slice(11, 16)} ${series} ${n}`));

describe("retry notices per bucket", () => {
  it("counts every retry event in [from, to), per minute over an hour, split by kind", async () => {
    const data = await run(RANGE);
    expect(data.range).toMatchObject({ bucket: "minute", bucketMs: M });
    expect(data.notices.buckets).toHaveLength(60);
    expect(data.notices.series).toEqual(["rate_limit", "capacity", "transport", "other"]);
    expect(nonZero(data.notices.buckets)).toEqual([
      "12:01 rate_limit 1",
      "12:01 capacity 1",
      "12:02 rate_limit 1",
      "12:05 rate_limit 1",
      "12:05 transport 1",
      "12:06 other 1",
      "12:10 capacity 1",
    ]);
    expect(data.totals.notices).toBe(7);
  });

  it.each([
    ["provider", { openai: 4, anthropic: 3 }],
    ["model", { "gpt-5": 2, "gpt-5-mini": 2, "claude-opus": 3 }],
  ])("split by %s", async (split, totals) => {
    const data = await run(`${RANGE}&split=${split}`);
    const sums: Record<string, number> = {};
    for (const bucket of data.notices.buckets) for (const [series, n] of Object.entries(bucket.counts)) sums[series] = (sums[series] ?? 0) + n;
    expect(sums).toEqual(totals);
  });

  it.each([
    ["provider", "provider=openai", 4],
    ["fact kind, not the thread's latest kind", "kind=capacity", 2],
    ["kind other covers notices without a kind", "kind=other", 1],
    ["source by name", "source=claude@ci", 3],
    ["source by id", "source=src-codex", 4],
    ["text", "q=DOCS", 3],
    ["thread status", "status=recovered", 2],
    ["derived stalled status", "status=stalled", 2],
  ])("filtered by %s", async (_name, filter, total) => {
    expect((await run(`${RANGE}&${filter}`)).totals.notices).toBe(total);
  });
});

describe("episode outcomes", () => {
  it("buckets ended episodes by their end and computes the recovery ratio", async () => {
    const data = await run(RANGE);
    expect(data.outcomes.series).toEqual(["recovered", "exhausted", "failed"]);
    expect(nonZero(data.outcomes.buckets)).toEqual(["12:03 recovered 1", "12:07 exhausted 1", "12:20 failed 1"]);
    expect(data.totals).toMatchObject({ episodesEnded: 3, episodesOpen: 1, recoveryRatio: 1 / 3 });
    expect(data.outcomes.buckets.find((b) => b.at.slice(11, 16) === "12:03")?.recoveryRatio).toBe(1);
  });
});

describe("time lost waiting", () => {
  it("sums each wait until the attempt, the next notice, the episode end or the range end", async () => {
    const data = await run(RANGE);
    expect(data.timeLost).toEqual([
      { provider: "openai", model: "gpt-5-mini", attempts: 2, timeLostMs: 9 * M + 50 * M },
      { provider: "anthropic", model: "claude-opus", attempts: 2, timeLostMs: 400 + 90_000 },
      { provider: "openai", model: "gpt-5", attempts: 2, timeLostMs: 230 + 2_000 },
    ]);
    expect(data.totals.timeLostMs).toBe(59 * M + 90_400 + 2_230);
    expect(data.totals).toMatchObject({ attempts: 6, attemptsPerEpisode: 1 + 6 / 3 });
  });

  it("lists the top threads by time lost, with their source for the link", async () => {
    expect((await run(RANGE)).topThreads.map((t) => [t.threadId, t.sourceId, t.status, t.attempts, t.timeLostMs])).toEqual([
      ["th-2", "src-codex", "stalled", 2, 59 * M],
      ["th-3", "src-claude", "exhausted", 2, 90_400],
      ["th-1", "src-codex", "recovered", 2, 2_230],
    ]);
  });

  it("an open wait in a range still running grows only up to now", async () => {
    const parsed = parseInsightsQuery(new URLSearchParams(`from=${new Date(T0).toISOString()}&to=${new Date(T0 + 600 * M).toISOString()}`), T0 + 30 * M);
    if (!parsed.ok) throw new Error(parsed.error);
    const data = await insights(parsed.query, T0 + 30 * M, handles.sql);
    expect(data.timeLost.find((row) => row.model === "gpt-5-mini")?.timeLostMs).toBe(9 * M + 20 * M);
  });
});

describe("advised vs actual gap", () => {
  it("bins advised delays and actual gaps of retries that happened, early ones apart", async () => {
    const bins = (await run(RANGE)).gaps.bins.filter((b) => b.advised || b.actual);
    expect(bins).toEqual([
      { label: "≤ 250 ms", upToMs: 250, advised: 0, actual: 1, early: 1 },
      { label: "≤ 500 ms", upToMs: 500, advised: 0, actual: 1, early: 1 },
      { label: "≤ 1 s", upToMs: 1_000, advised: 1, actual: 0, early: 0 },
      { label: "≤ 2 s", upToMs: 2_000, advised: 2, actual: 1, early: 0 },
      { label: "≤ 30 s", upToMs: 30_000, advised: 1, actual: 0, early: 0 },
      // th-2's first retry never reported its start: its next notice, 9 min later, shows it happened.
      { label: "≤ 10 min", upToMs: 600_000, advised: 0, actual: 1, early: 0 },
    ]);
  });

  it("gives each agent's share of early retries", async () => {
    const data = await run(RANGE);
    expect(data.earlyByAgent).toEqual([
      { agent: "claude", attempts: 1, early: 1, share: 1, avgEarlyByMs: 600 },
      { agent: "codex", attempts: 3, early: 1, share: 1 / 3, avgEarlyByMs: 1_770 },
    ]);
    expect(data.totals).toMatchObject({ attemptsJudged: 4, attemptsEarly: 2, earlyShare: 0.5 });
  });
});

describe("an incident permalink", () => {
  it("renders the same numbers whenever it is opened", async () => {
    const parsed = parseInsightsQuery(new URLSearchParams(RANGE), NOW);
    if (!parsed.ok) throw new Error(parsed.error);
    expect(await insights(parsed.query, NOW + 7 * 24 * 60 * M, handles.sql)).toEqual(await insights(parsed.query, NOW, handles.sql));
  });

  it("an empty range has zero buckets and no ratio, not errors", async () => {
    const data = await run("from=2020-01-01T00:00:00Z&to=2020-01-01T01:00:00Z");
    expect(data.totals).toMatchObject({ notices: 0, episodesEnded: 0, recoveryRatio: null, earlyShare: null, timeLostMs: 0 });
    expect(data.notices.buckets.every((b) => b.total === 0)).toBe(true);
  });
});

describe("gap bins in SQL", () => {
  it.each([
    [0, 0],
    [100, 0],
    [101, 1],
    [230, 1],
    [2_000, 4],
    [3_600_000, GAP_BOUNDS_MS.length - 1],
    [3_600_001, GAP_BOUNDS_MS.length],
  ])("%i ms falls in bin %i (upper bounds inclusive)", async (ms, bin) => {
    expect(handles.sql.prepare(`SELECT ${gapBinSql("v")} FROM (SELECT ? AS v)`).pluck().get(ms)).toBe(bin);
  });
});

