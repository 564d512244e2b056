/**
 * Calls and counts: failed calls that follow each other are retries even when no notice came
 * (derived notices), a notice of the same failure refines rather than duplicates, and an episode
 * counts the calls made (the first included) and the source's own count and retry time.
 */
import { describe, expect, it } from "vitest";
import { shuffled } from "./random";
import { reduce, replay } from "./reducer";
import { MIN, SEC, T0, eventsOn } from "./testing";
import type { ErrorReport, EpisodeRecord, RadarEvent } from "./types";

const E503: ErrorReport = { httpStatus: 503, message: "http 503" };
const E429: ErrorReport = { httpStatus: 429, message: "http 429" };

/** Calls as Codex's logs give them: [start ms, duration ms, error or null]. */
type Call = [startMs: number, durationMs: number, error: ErrorReport | null];

function calls(e: ReturnType<typeof eventsOn>, list: Call[]): RadarEvent[] {
  return list.map(([start, duration, error]) => e("attempt", start, error ? { turnId: "u1", error, endedAt: T0 + start + duration } : { turnId: "u1" }));
}

/** A 503 storm of four calls, the gaps of a real `codex exec` (223, 408, 779 ms after each failure). */
const STORM: Call[] = [
  [1_000, 200, E503],
  [1_423, 200, E503],
  [2_031, 200, E503],
  [3_010, 200, E503],
];

const shape = (ep: EpisodeRecord | null) =>
  ep && {
    kind: ep.kind,
    outcome: ep.outcome,
    attemptsMade: ep.attemptsMade,
    reportedRetryMs: ep.reportedRetryMs,
    attempts: ep.attempts.map((a) => ({ n: a.n, noticeAt: a.noticeAt - T0, startedAt: a.startedAt === null ? null : a.startedAt - T0, advisedDelayMs: a.advisedDelayMs, httpStatus: a.httpStatus })),
  };

describe("failed calls without notices (Codex logs alone)", () => {
  const e = eventsOn("storm");
  // As for a source that reports only by OpenTelemetry: nothing can interrupt it.
  const events = [e("settings.changed", 0, { settings: { reach: { interrupt: false, continue: false } } }), e("turn.started", 0, { turnId: "u1" }), ...calls(e, STORM)];

  it("are one capacity episode, one retry per call after the first, its gaps the real ones, every call counted", () => {
    const s = replay(events, T0 + 3_300);
    expect(s.status).toBe("retrying");
    expect(s.episodeCount).toBe(1);
    expect(shape(s.episode)).toEqual({
      kind: "capacity",
      outcome: null,
      attemptsMade: 4,
      reportedRetryMs: null,
      attempts: [
        { n: 1, noticeAt: 1_200, startedAt: 1_423, advisedDelayMs: null, httpStatus: 503 },
        { n: 2, noticeAt: 1_623, startedAt: 2_031, advisedDelayMs: null, httpStatus: 503 },
        { n: 3, noticeAt: 2_231, startedAt: 3_010, advisedDelayMs: null, httpStatus: 503 },
      ],
    });
  });

  it("end by the watchdog when the calls stop coming: exhausted at the last notice's deadline, not running forever", () => {
    const s = replay(events, T0 + 30 * MIN);
    expect(s.status).toBe("exhausted");
    expect(s.episode).toMatchObject({ outcome: "exhausted", attemptsMade: 4 });
    expect(s.wakeAt).toBeNull();
  });

  it("a fifth call past the policy's bound of 3 retries exhausts the episode at once", () => {
    const f = eventsOn("storm-5");
    const s = replay([f("turn.started", 0, { turnId: "u1" }), ...calls(f, [...STORM, [4_723, 200, E503]])], T0 + 5_000);
    expect(s.episode).toMatchObject({ outcome: "exhausted", outcomeReason: "attempt 4 is past the bound of 3", attemptsMade: 5 });
  });

  it("two 429s then a call that works: recovered after three calls", () => {
    const f = eventsOn("429-ok");
    const list = [f("turn.started", 0, { turnId: "u1" }), ...calls(f, [[1_000, 200, E429], [3_200, 200, E429], [5_400, 300, null]]), f("progress", 5_700, { turnId: "u1" })];
    const s = replay(list, T0 + 6_000);
    expect(s.status).toBe("recovered");
    expect(s.episode).toMatchObject({ kind: "rate_limit", outcome: "recovered", attemptsMade: 3 });
    expect(s.episode!.attempts.map((a) => [a.n, a.startedAt! - a.noticeAt])).toEqual([[1, 2_000], [2, 2_000]]);
  });

  it("a single failed call is no episode yet; one that never recovers by waiting (401) is none at all", () => {
    const f = eventsOn("single");
    expect(replay([f("turn.started", 0, { turnId: "u1" }), ...calls(f, [[1_000, 200, E503]])], T0 + 2_000)).toMatchObject({ status: "running", episode: null, failedCall: { endedAt: T0 + 1_200 } });
    const g = eventsOn("auth");
    const auth = replay([g("turn.started", 0, { turnId: "u1" }), ...calls(g, [[1_000, 200, { httpStatus: 401 }], [2_000, 200, { httpStatus: 401 }]])], T0 + 3_000);
    expect(auth).toMatchObject({ status: "running", episode: null });
  });

  it("a call that overlaps the failed one (the same call seen twice) derives nothing", () => {
    const f = eventsOn("twice");
    const s = replay([f("turn.started", 0, { turnId: "u1" }), ...calls(f, [[1_000, 200, E503], [1_000, 200, E503]])], T0 + 2_000);
    expect(s.episode).toBeNull();
  });
});

describe("failed calls and the notices of the same failures (Codex logs and traces)", () => {
  const e = eventsOn("merged");
  const logs = [e("turn.started", 0, { turnId: "u1" }), ...calls(e, STORM)];
  // codex.retry span events, a few ms after each failure, with the exact delay.
  const traces = [
    e("retry", 1_203, { turnId: "u1", attempt: 1, delayMs: 213, error: E503 }),
    e("retry", 1_626, { turnId: "u1", attempt: 2, delayMs: 398, error: E503 }),
    e("retry", 2_234, { turnId: "u1", attempt: 3, delayMs: 774, error: E503 }),
  ];
  const want = {
    kind: "capacity",
    outcome: null,
    attemptsMade: 4,
    reportedRetryMs: null,
    attempts: [
      { n: 1, noticeAt: 1_203, startedAt: 1_423, advisedDelayMs: 213, httpStatus: 503 },
      { n: 2, noticeAt: 1_626, startedAt: 2_031, advisedDelayMs: 398, httpStatus: 503 },
      { n: 3, noticeAt: 2_234, startedAt: 3_010, advisedDelayMs: 774, httpStatus: 503 },
    ],
  };

  it("the notices refine the retries: one episode, exact delays, each call once", () => {
    const s = replay([...logs, ...traces], T0 + 3_300);
    expect(s.episodeCount).toBe(1);
    expect(shape(s.episode)).toEqual(want);
  });

  it.each(["a", "b", "c", "d"])("in any order of arrival (shuffle %s)", (seed) => {
    expect(shape(replay(shuffled([...logs, ...traces], seed), T0 + 3_300).episode)).toEqual(want);
  });

  it("notices for some failures only (an export lost): the others are derived, in one episode", () => {
    const s = replay([...logs, traces[0]], T0 + 3_300);
    expect(s.episodeCount).toBe(1);
    expect(s.episode!.attempts.map((a) => [a.n, a.advisedDelayMs, a.noticeAt - T0])).toEqual([[1, 213, 1_203], [2, null, 1_623], [3, null, 2_231]]);
    expect(s.episode!.attemptsMade).toBe(4);
  });
});

describe("records of one turn exported apart (Codex: a trace without its calls)", () => {
  it("a notice that says nothing of the failure takes the failed call's status", () => {
    const e = eventsOn("bare");
    const s = replay([e("turn.started", 0, { turnId: "u1" }), ...calls(e, [[1_000, 200, E429]]), e("retry", 1_205, { turnId: "u1", attempt: 1, delayMs: 1_998 })], T0 + 1_300);
    expect(s).toMatchObject({ status: "retrying", retry: { kind: "rate_limit", nextAttemptEstimated: false }, episode: { kind: "rate_limit", attempts: [{ n: 1, httpStatus: 429 }] } });
  });

  it.each<[string, Call[], string]>([
    ["the last call failed: the turn failed with its status", [[1_000, 200, E429]], "failed"],
    ["the last call worked: the turn completed", [[1_000, 200, E429], [3_200, 300, null]], "completed"],
  ])("a turn end that leaves the outcome to the last call: %s", (_name, list, status) => {
    const e = eventsOn("end");
    const s = replay([e("turn.started", 0, { turnId: "u1" }), ...calls(e, list), e("turn.completed", 4_000, { turnId: "u1", lastCallDecides: true })], T0 + 5_000);
    expect(s.status).toBe(status);
    if (status === "failed") expect(s.lastError).toMatchObject({ kind: "rate_limit", httpStatus: 429 });
  });
});

describe("the calls an episode counts", () => {
  it.each<[string, (e: ReturnType<typeof eventsOn>) => RadarEvent[], Partial<EpisodeRecord>]>([
    [
      "notices only, the last retry never seen: a call per notice",
      (e) => [e("turn.started", 0, { turnId: "u1" }), e("retry", SEC, { turnId: "u1", error: E429 }), e("retry", 3 * SEC, { turnId: "u1", error: E429 })],
      { attemptsMade: 2 },
    ],
    [
      "notices then completion: the last retry worked, one call more",
      (e) => [e("turn.started", 0, { turnId: "u1" }), e("retry", SEC, { turnId: "u1", error: E429 }), e("retry", 3 * SEC, { turnId: "u1", error: E429 }), e("turn.completed", 6 * SEC, { turnId: "u1" })],
      { attemptsMade: 3, outcome: "completed" },
    ],
    [
      "retries started (Claude's traces): each a call",
      (e) => [e("turn.started", 0, { turnId: "u1" }), e("retry", SEC, { turnId: "u1", attempt: 1 }), e("attempt", 3 * SEC, { turnId: "u1", attempt: 1 })],
      { attemptsMade: 2 },
    ],
    [
      "Claude's give-up (logs): api_error with 5 calls, then api_retries_exhausted with 5 and 11.5 s",
      (e) => [
        e("turn.started", 0, { turnId: "p1" }),
        e("retry", 12 * SEC, { turnId: "p1", willRetry: false, attempt: 4, attemptsMade: 5, error: { httpStatus: 429, message: "rate limited" } }),
        e("turn.failed", 12 * SEC, { turnId: "p1", attempt: 4, attemptsMade: 5, retryMs: 11_517, error: { httpStatus: 429, message: "rate limited" } }),
      ],
      { attemptsMade: 5, reportedRetryMs: 11_517, outcome: "failed", attempts: [] },
    ],
    [
      "a give-up whose own count is smaller than the calls seen keeps the calls seen",
      (e) => [
        e("turn.started", 0, { turnId: "u1" }),
        e("retry", SEC, { turnId: "u1", error: E429 }),
        e("retry", 3 * SEC, { turnId: "u1", error: E429 }),
        e("retry", 5 * SEC, { turnId: "u1", error: E429 }),
        e("turn.failed", 6 * SEC, { turnId: "u1", attemptsMade: 2, retryMs: 4_000, error: E429 }),
      ],
      { attemptsMade: 3, reportedRetryMs: 4_000, outcome: "failed" },
    ],
  ])("%s", (_name, build, want) => {
    const events = build(eventsOn("count"));
    expect(replay(events, events.at(-1)!.at + 100).episode).toMatchObject(want);
  });

  it("an episode stored before the count existed counts its notices, then goes on counting", () => {
    const e = eventsOn("old");
    const s = replay([e("turn.started", 0, { turnId: "u1" }), e("retry", SEC, { turnId: "u1", error: E429 }), e("retry", 3 * SEC, { turnId: "u1", error: E429 })], T0 + 4 * SEC);
    const { attemptsMade: _made, reportedRetryMs: _ms, ...older } = s.episode!;
    const stored = { ...s, episode: older as EpisodeRecord };
    const next = reduce(stored, e("attempt", 5 * SEC, { turnId: "u1" }), T0 + 5 * SEC).state;
    expect(next.episode).toMatchObject({ attemptsMade: 3 });
  });
});
