import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GAP_BOUNDS_MS } from "@/lib/insights/gaps";
import { parseExportQuery, parseInsightsQuery } from "@/lib/insights/range";
import type { ExportKind, ExportRow } from "@/lib/insights/stream";
import { openDatabase, type DatabaseHandles } from "./client";
import { EXPORT_COLUMNS, exportPages, threadExportRow, timelinePages } from "./exports";
import { gapBinSql, insights, metricsSnapshot, threadFilterSql } from "./insights";
import { threadWhere, type ThreadFilter } from "./threads";

/**
 * The insights SQL against a real migrated SQLite file with a small, hand-computed data set:
 * three threads, seven retry notices, four episodes, six attempts, inside the hour from T0.
 */
const T0 = Date.UTC(2026, 10, 20, 12, 0, 0);
const M = 60_000;
const NOW = T0 + 2 * 60 * M;
const RANGE = `from=${new Date(T0).toISOString()}&to=${new Date(T0 + 60 * M).toISOString()}`;

let handles: DatabaseHandles;
let dir: string;

function seed(sql: DatabaseHandles["sql"]) {
  const source = sql.prepare(`INSERT INTO "Source" (id, name, createdAt) VALUES (?, ?, ?)`);
  source.run("src-codex", "codex@build-7", T0);
  source.run("src-claude", "claude@ci", T0);
  const thread = sql.prepare(
    `INSERT INTO "Thread" (id, sourceId, externalId, title, agent, provider, model, status, retryKind, lastErrorKind,
       lastErrorMessage, deadlineAt, state, createdAt, updatedAt)
     VALUES (@id, @sourceId, @externalId, @title, @agent, @provider, @model, @status, @retryKind, @lastErrorKind,
       @lastErrorMessage, @deadlineAt, '{}', @at, @at)`,
  );
  const base = { retryKind: null, lastErrorKind: null, lastErrorMessage: null, deadlineAt: null };
  thread.run({ ...base, id: 1, sourceId: "src-codex", externalId: "th-1", title: "=HYPERLINK(\"http://evil\")", agent: "codex", provider: "openai", model: "gpt-5", status: "recovered", lastErrorKind: "rate_limit", at: T0 + 3 * M });
  thread.run({ ...base, id: 2, sourceId: "src-codex", externalId: "th-2", title: "refactor a_b", agent: "codex", provider: "openai", model: "gpt-5-mini", status: "retrying", retryKind: "capacity", deadlineAt: NOW - M, at: T0 + 10 * M });
  thread.run({ ...base, id: 3, sourceId: "src-claude", externalId: "th-3", title: "Docs", agent: "claude", provider: "anthropic", model: "claude-opus", status: "exhausted", lastErrorKind: "rate_limit", lastErrorMessage: "429 Too Many Requests", at: T0 + 7 * M });
  thread.run({ ...base, id: 4, sourceId: "src-claude", externalId: "th-4", title: null, agent: null, provider: null, model: null, status: "retrying", retryKind: "transport", deadlineAt: NOW + M, at: T0 + 90 * M });

  let eventId = 0;
  const event = sql.prepare(
    `INSERT INTO "Event" (sourceId, threadId, idempotencyKey, format, type, at, receivedAt, kind, attempt, message, raw, normalized)
     VALUES (?, ?, ?, 'canonical', ?, ?, ?, ?, ?, ?, ?, '{}')`,
  );
  const ev = (threadId: number, type: string, at: number, kind: string | null, attempt: number | null = null, message: string | null = null) => {
    const sourceId = threadId <= 2 ? "src-codex" : "src-claude";
    event.run(sourceId, threadId, `k${++eventId}`, type, at, at, kind, attempt, message, JSON.stringify({ type, n: eventId }));
  };
  ev(1, "retry", T0 - M, "rate_limit", 1); // before the range
  ev(1, "retry", T0 + M, "rate_limit", 1);
  ev(1, "attempt", T0 + M + 230, null, 1);
  ev(1, "retry", T0 + 2 * M, "rate_limit", 2);
  ev(1, "progress", T0 + 3 * M, null);
  ev(2, "retry", T0 + M, "capacity", 1, "-1+1 overloaded");
  ev(2, "retry", T0 + 10 * M, "capacity", 2);
  ev(3, "retry", T0 + 5 * M, "rate_limit", 1);
  ev(3, "retry", T0 + 5 * M + 30_000, "transport", 2);
  ev(3, "retry", T0 + 6 * M, null, 3);
  ev(3, "retry", T0 + 60 * M, "rate_limit", 4); // exactly at the range end: excluded

  const episode = sql.prepare(
    `INSERT INTO "Episode" (id, threadId, seq, kind, policy, startedAt, endedAt, outcome) VALUES (?, ?, ?, ?, 'default', ?, ?, ?)`,
  );
  episode.run(1, 1, 1, "rate_limit", T0 + M, T0 + 3 * M, "recovered");
  episode.run(2, 2, 1, "capacity", T0 + M, null, null);
  episode.run(3, 3, 1, "rate_limit", T0 + 5 * M, T0 + 7 * M, "exhausted");
  episode.run(4, 1, 2, "capacity", T0 + 15 * M, T0 + 20 * M, "failed");
  const attempt = sql.prepare(
    `INSERT INTO "Attempt" (episodeId, n, noticeAt, advisedDelayMs, startedAt, earlyByMs, message) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  );
  attempt.run(1, 1, T0 + M, 2_000, T0 + M + 230, 1_770, null); // 1.77 s early
  attempt.run(1, 2, T0 + 2 * M, 2_000, T0 + 2 * M + 2_000, null, null);
  attempt.run(2, 1, T0 + M, 30_000, null, null, "@capacity"); // waits until the next notice: 9 min
  attempt.run(2, 2, T0 + 10 * M, null, null, null, null); // open: waits until the range end, 50 min
  attempt.run(3, 1, T0 + 5 * M, 1_000, T0 + 5 * M + 400, 600, null);
  attempt.run(3, 2, T0 + 5 * M + 30_000, 1_000, null, null, null); // until the episode ended: 90 s

  const directive = sql.prepare(
    `INSERT INTO "Directive" (id, sourceId, threadId, dedupeKey, kind, origin, reason, state, result, createdAt) VALUES (?, ?, ?, ?, ?, 'policy', 'r', ?, ?, ?)`,
  );
  directive.run("d1", "src-claude", 3, "k1", "interrupt", "acknowledged", "acknowledged", T0 + 7 * M);
  directive.run("d2", "src-codex", 2, "k2", "interrupt", "pending", null, T0 + 11 * M);
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-insights-"));
  handles = openDatabase(path.join(dir, "radar.db"));
  seed(handles.sql);
});

afterAll(async () => {
  await handles.prisma.$disconnect();
  handles.sql.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

function run(search: string) {
  const parsed = parseInsightsQuery(new URLSearchParams(search), NOW);
  if (!parsed.ok) throw new Error(parsed.error);
  return insights(parsed.query, NOW, handles.sql);
}

const nonZero = (buckets: { at: string; counts: Record<string, number> }[]) =>
  buckets.flatMap((b) => Object.entries(b.counts).filter(([, n]) => n > 0).map(([series, n]) => `${b.at.slice(11, 16)} ${series} ${n}`));

describe("retry notices per bucket", () => {
  it("counts every retry event in [from, to), per minute over an hour, split by kind", () => {
    const data = run(RANGE);
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
  ])("split by %s", (split, totals) => {
    const data = run(`${RANGE}&split=${split}`);
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
  ])("filtered by %s", (_name, filter, total) => {
    expect(run(`${RANGE}&${filter}`).totals.notices).toBe(total);
  });
});

describe("episode outcomes", () => {
  it("buckets ended episodes by their end and computes the recovery ratio", () => {
    const data = run(RANGE);
    expect(data.outcomes.series).toEqual(["recovered", "exhausted", "failed"]);
    expect(nonZero(data.outcomes.buckets)).toEqual(["12:03 recovered 1", "12:07 exhausted 1", "12:20 failed 1"]);
    expect(data.totals).toMatchObject({ episodesEnded: 3, episodesOpen: 1, recoveryRatio: 1 / 3 });
    expect(data.outcomes.buckets.find((b) => b.at.slice(11, 16) === "12:03")?.recoveryRatio).toBe(1);
  });
});

describe("time lost waiting", () => {
  it("sums each wait until the attempt, the next notice, the episode end or the range end", () => {
    const data = run(RANGE);
    expect(data.timeLost).toEqual([
      { provider: "openai", model: "gpt-5-mini", attempts: 2, timeLostMs: 9 * M + 50 * M },
      { provider: "anthropic", model: "claude-opus", attempts: 2, timeLostMs: 400 + 90_000 },
      { provider: "openai", model: "gpt-5", attempts: 2, timeLostMs: 230 + 2_000 },
    ]);
    expect(data.totals.timeLostMs).toBe(59 * M + 90_400 + 2_230);
  });

  it("lists the top threads by time lost, with their source for the link", () => {
    expect(run(RANGE).topThreads.map((t) => [t.threadId, t.sourceId, t.status, t.attempts, t.timeLostMs])).toEqual([
      ["th-2", "src-codex", "stalled", 2, 59 * M],
      ["th-3", "src-claude", "exhausted", 2, 90_400],
      ["th-1", "src-codex", "recovered", 2, 2_230],
    ]);
  });

  it("an open wait in a range still running grows only up to now", () => {
    const parsed = parseInsightsQuery(new URLSearchParams(`from=${new Date(T0).toISOString()}&to=${new Date(T0 + 600 * M).toISOString()}`), T0 + 30 * M);
    if (!parsed.ok) throw new Error(parsed.error);
    const data = insights(parsed.query, T0 + 30 * M, handles.sql);
    expect(data.timeLost.find((row) => row.model === "gpt-5-mini")?.timeLostMs).toBe(9 * M + 20 * M);
  });
});

describe("advised vs actual gap", () => {
  it("bins advised delays and actual gaps of retries that happened, early ones apart", () => {
    const bins = run(RANGE).gaps.bins.filter((b) => b.advised || b.actual);
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

  it("gives each agent's share of early retries", () => {
    const data = run(RANGE);
    expect(data.earlyByAgent).toEqual([
      { agent: "claude", attempts: 1, early: 1, share: 1, avgEarlyByMs: 600 },
      { agent: "codex", attempts: 3, early: 1, share: 1 / 3, avgEarlyByMs: 1_770 },
    ]);
    expect(data.totals).toMatchObject({ attemptsJudged: 4, attemptsEarly: 2, earlyShare: 0.5 });
  });
});

describe("an incident permalink", () => {
  it("renders the same numbers whenever it is opened", () => {
    const parsed = parseInsightsQuery(new URLSearchParams(RANGE), NOW);
    if (!parsed.ok) throw new Error(parsed.error);
    expect(insights(parsed.query, NOW + 7 * 24 * 60 * M, handles.sql)).toEqual(insights(parsed.query, NOW, handles.sql));
  });

  it("an empty range has zero buckets and no ratio, not errors", () => {
    const data = run("from=2020-01-01T00:00:00Z&to=2020-01-01T01:00:00Z");
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
  ])("%i ms falls in bin %i (upper bounds inclusive)", (ms, bin) => {
    expect(handles.sql.prepare(`SELECT ${gapBinSql("v")} FROM (SELECT ? AS v)`).pluck().get(ms)).toBe(bin);
  });
});

describe("the SQL thread filter selects what the board's Prisma filter selects", () => {
  const cases: [string, Omit<ThreadFilter, "from" | "to">][] = [
    ["nothing", {}],
    ["stalled", { status: ["stalled"] }],
    ["retrying (not stalled)", { status: ["retrying"] }],
    ["two statuses", { status: ["recovered", "exhausted"] }],
    ["kind (thread's retry or last error)", { kind: ["rate_limit"] }],
    ["provider", { provider: ["openai"] }],
    ["model", { model: ["gpt-5", "claude-opus"] }],
    ["source by name", { source: ["claude@ci"] }],
    ["source by id", { source: ["src-codex"] }],
    ["text, any case", { q: "DOCS" }],
    ["text in an error", { q: "too many" }],
    ["text with a LIKE wildcard", { q: "a_b" }],
    ["combined", { provider: ["openai"], status: ["stalled", "recovered"], q: "th-" }],
  ];
  it.each(cases)("%s", async (_name, filter) => {
    const expected = (await handles.prisma.thread.findMany({ where: threadWhere(filter, NOW), select: { id: true }, orderBy: { id: "asc" } })).map((r) => r.id);
    const clause = threadFilterSql(filter, NOW);
    const actual = handles.sql.prepare(`SELECT t.id FROM "Thread" t WHERE ${clause.sql} ORDER BY t.id`).pluck().all(...clause.params);
    expect(actual).toEqual(expected);
  });
});

describe("metrics snapshot", () => {
  it("aggregates the whole database by low-cardinality labels", () => {
    const s = metricsSnapshot(NOW, handles.sql);
    const sum = (rows: { value: number }[]) => rows.reduce((a, r) => a + r.value, 0);
    expect(sum(s.notices)).toBe(9);
    expect(s.notices).toContainEqual({ kind: "rate_limit", provider: "openai", model: "gpt-5", agent: "codex", value: 3 });
    expect(s.episodes).toContainEqual({ outcome: "exhausted", kind: "rate_limit", provider: "anthropic", model: "claude-opus", value: 1 });
    expect(s.directives).toEqual(expect.arrayContaining([
      { kind: "interrupt", result: "acknowledged", value: 1 },
      { kind: "interrupt", result: "pending", value: 1 },
    ]));
    expect(Object.fromEntries(s.threads.map((r) => [r.status, r.value]))).toEqual({ recovered: 1, stalled: 1, exhausted: 1, retrying: 1 });
    expect(sum(s.earlyAttempts)).toBe(2);
    // Only finished waits: 230 + 2000 + 9 min + 400 + 90 s (the open one is left out).
    expect(sum(s.waitMs)).toBe(230 + 2_000 + 9 * M + 400 + 90_000);
    const actual = s.actualGap.reduce((acc, row) => acc + row.count, 0);
    expect(actual).toBe(4);
    expect(s.advisedDelay.find((r) => r.labels.kind === "capacity")?.bins[7]).toBe(1); // 30 s
  });
});

describe("exports", () => {
  function rows(kind: ExportKind, search: string, pageSize = 2): ExportRow[] {
    const parsed = parseExportQuery(new URLSearchParams(search), NOW);
    if (!parsed.ok) throw new Error(parsed.error);
    return [...exportPages(kind, parsed.query, NOW, handles.sql, pageSize)].flat();
  }

  it.each([
    ["threads", "", ["th-1", "th-2", "th-3", "th-4"]],
    ["threads", RANGE, ["th-1", "th-2", "th-3"]],
    ["threads", "provider=openai", ["th-1", "th-2"]],
    ["threads", "status=stalled", ["th-2"]],
    ["threads", `from=${new Date(T0 + 5 * M).toISOString()}&to=${new Date(T0 + 11 * M).toISOString()}`, ["th-2", "th-3"]],
    ["episodes", "", ["th-1#1", "th-2#1", "th-3#1", "th-1#2"]],
    ["episodes", "kind=capacity", ["th-2#1", "th-1#2"]],
    ["episodes", `from=${new Date(T0 + 4 * M).toISOString()}&to=${new Date(T0 + 16 * M).toISOString()}`, ["th-2#1", "th-3#1", "th-1#2"]],
    ["attempts", RANGE, ["th-1#1.1", "th-2#1.1", "th-1#1.2", "th-3#1.1", "th-3#1.2", "th-2#1.2"]],
    ["attempts", "source=claude@ci", ["th-3#1.1", "th-3#1.2"]],
  ] as const)("%s ?%s, across pages", (kind, search, ids) => {
    const id = (row: ExportRow) => `${row.threadId}${row.episodeSeq ? `#${row.episodeSeq}` : ""}${row.n ? `.${row.n}` : ""}`;
    expect(rows(kind, search).map(id)).toEqual(ids);
  });

  it.each(["threads", "episodes", "attempts"] as const)("%s rows carry exactly the documented columns", (kind) => {
    for (const row of rows(kind, "")) expect(Object.keys(row).sort()).toEqual([...EXPORT_COLUMNS[kind]].sort());
  });

  it("presents times as ISO, flags as booleans and derives gaps and waits", () => {
    const [first] = rows("attempts", RANGE);
    expect(first).toMatchObject({
      noticeAt: new Date(T0 + M).toISOString(),
      startedAt: new Date(T0 + M + 230).toISOString(),
      retriedAt: new Date(T0 + M + 230).toISOString(),
      estimated: false,
      advisedDelayMs: 2_000,
      actualGapMs: 230,
      earlyByMs: 1_770,
      waitMs: 230,
    });
    expect(rows("attempts", RANGE)[1]).toMatchObject({ startedAt: null, retriedAt: new Date(T0 + 10 * M).toISOString(), actualGapMs: 9 * M, waitMs: 9 * M });
    const episodes = rows("episodes", RANGE);
    expect(episodes.map((e) => e.timeLostMs)).toEqual([2_230, 59 * M, 90_400, 0]);
    expect(episodes.map((e) => e.attempts)).toEqual([2, 2, 2, 0]);
  });

  it("a thread's timeline: episodes, attempts and events in one time order", () => {
    const timeline = [...timelinePages(1, handles.sql, 3)].flat();
    expect(timeline.map((r) => `${r.record}:${r.type ?? r.outcome ?? r.n}`)).toEqual([
      "event:retry",
      "episode:recovered",
      "attempt:1",
      "event:retry",
      "event:attempt",
      "attempt:2",
      "event:retry",
      "event:progress",
      "episode:failed",
    ]);
    expect(timeline[0].raw).toEqual({ type: "retry", n: 1 });
    expect(threadExportRow(2, NOW, handles.sql)).toMatchObject({ threadId: "th-2", status: "stalled", source: "codex@build-7" });
  });
});
