import { describe, expect, it } from "vitest";
import { initialThreadState, reduce, tick } from "./reducer";
import { MIN, SEC, T0, eventsOn, feed, feedStep, withEffects } from "./testing";
import type { ErrorReport, RadarEvent } from "./types";

/**
 * Hand-built RadarEvents that mirror the real-client captures (../shared/fixtures/real-clients)
 * and the seeds' incidents, as the adapters normalise them. Adapter-level replays of the
 * capture files themselves live in captures.test.ts.
 */

const codexDisconnect429 = (n: number): ErrorReport => ({
  message: `Reconnecting... ${n}/5`,
  code: "responseStreamDisconnected",
  httpStatus: 429,
  details: {
    additionalDetails: "exceeded retry limit, last status: 429 Too Many Requests, request id: req_mock_eeeaf45c3696730d",
    codexErrorInfo: { responseStreamDisconnected: { httpStatusCode: 429 } },
  },
});

describe("Codex app-server: 429 with Retry-After 2, two 'Reconnecting... n/5' notices, then the reply", () => {
  const e = eventsOn("codex-429");
  const events: RadarEvent[] = [
    e("thread.started", 0, { agent: "codex", provider: "mock", model: "gpt-5.5" }),
    e("turn.started", 63, { turnId: "turn-a" }),
    e("retry", 208, { turnId: "turn-a", willRetry: true, error: codexDisconnect429(1) }),
    e("retry", 2237, { turnId: "turn-a", willRetry: true, error: codexDisconnect429(2) }),
    e("progress", 4274, { turnId: "turn-a", progressCount: 5, lastAt: T0 + 4282 }),
    e("turn.completed", 4294, { turnId: "turn-a" }),
  ];

  it("shows retrying 1/5 then 2/5 under codex-429-stall-bound, each re-arming its deadline", () => {
    expect(feed(events.slice(0, 3)).retry).toMatchObject({ attempt: 1, maxAttempts: 5, policy: "codex-429-stall-bound", deadlineAt: T0 + 208 + 65 * SEC });
    expect(feed(events.slice(0, 4)).retry).toMatchObject({ attempt: 2, maxAttempts: 5, deadlineAt: T0 + 2237 + 70 * SEC });
  });
  it("recovers on the reply and completes: one episode, two attempts, outcome recovered", () => {
    const s = feed(events, 10 * MIN);
    expect(s).toMatchObject({ status: "completed", episodeCount: 1, progressCount: 5, lastProgressAt: T0 + 4282 });
    expect(s.episode).toMatchObject({ kind: "rate_limit", outcome: "recovered", maxAttempts: 5 });
    expect(s.episode?.attempts.map((a) => [a.n, a.httpStatus, a.code])).toEqual([
      [1, 429, "responseStreamDisconnected"],
      [2, 429, "responseStreamDisconnected"],
    ]);
  });
});

describe("Codex app-server: 429 with Retry-After 3600 — one notice, then an hour of silence", () => {
  const e = eventsOn("codex-hang");
  const events: RadarEvent[] = [e("thread.started", 0), e("turn.started", 100, { turnId: "turn-h" }), e("retry", 1000, { turnId: "turn-h", willRetry: true, error: codexDisconnect429(1) })];

  it("under codex-429-stall-bound the silent hang ends exhausted at notice + 65 s with an interrupt directive", () => {
    expect(feed(events, 1000 + 65 * SEC - 1).status).toBe("retrying");
    const s = withEffects(feedStep(events, 1000 + 65 * SEC));
    expect(s).toMatchObject({ status: "exhausted", episode: { outcome: "exhausted", outcomeCode: "rateLimitRetryExhausted", endedAt: T0 + 1000 + 65 * SEC } });
    expect(s.directives).toEqual([expect.objectContaining({ kind: "interrupt", turnId: "turn-h", origin: "policy", cascade: true, key: "codex-hang:turn-h:ep1:interrupt" })]);
  });
  it("a deployment grace override (settings.graceMs) moves that deadline to notice + 5 s + the override", () => {
    const start = { ...initialThreadState("codex-hang"), settings: { graceMs: 2 * SEC } };
    expect(feed(events, 1000 + 7 * SEC - 1, start).status).toBe("retrying");
    expect(feed(events, 1000 + 7 * SEC, start)).toMatchObject({ status: "exhausted", episode: { outcomeCode: "rateLimitRetryExhausted" } });
  });
  it("Codex answers the interrupt within milliseconds with turn/completed interrupted: still exhausted, interrupt acknowledged", () => {
    const exhausted = feed(events, 1000 + 65 * SEC);
    const s = reduce(exhausted, e("turn.interrupted", 1000 + 65 * SEC + 10, { turnId: "turn-h" }), T0 + 1000 + 65 * SEC + 10).state;
    expect(s).toMatchObject({ status: "exhausted", interrupt: { result: "acknowledged" }, wakeAt: null });
    expect(tick(s, T0 + 2 * 3600 * SEC).state.status).toBe("exhausted");
  });
});

describe("codex exec --json: 429 forever — five 'Reconnecting... n/5' lines, the final error, turn.failed (no turn ids)", () => {
  const e = eventsOn("exec-429");
  const line = (n: number) => `Reconnecting... ${n}/5 (exceeded retry limit, last status: 429 Too Many Requests, request id: req_mock_45ec0f8260cc63b2)`;
  const final = "exceeded retry limit, last status: 429 Too Many Requests, request id: req_mock_efd75ee9ec95cf9e";
  const events: RadarEvent[] = [
    e("thread.started", 153),
    e("turn.started", 227),
    ...[1, 2, 3, 4, 5].map((n) => e("retry", 315 + (n - 1) * 2040, { error: { message: line(n) } })),
    e("retry", 10_524, { willRetry: false, error: { message: final } }),
    e("turn.failed", 10_535, { error: { message: final } }),
  ];

  it("counts 1/5 … 5/5 from the text, classified as a rate limit by its '429'", () => {
    const s = feed(events.slice(0, 7));
    expect(s).toMatchObject({ status: "retrying", retry: { kind: "rate_limit", attempt: 5, maxAttempts: 5 } });
  });
  it("ends failed (the source gave up), one episode of five attempts", () => {
    const s = feed(events, 10 * MIN);
    expect(s).toMatchObject({ status: "failed", episodeCount: 1, lastError: { kind: "rate_limit" }, episode: { outcome: "failed" } });
    expect(s.episode?.attempts).toHaveLength(5);
  });
});

describe("Codex app-server: 503 overloaded — five silent quick retries, then serverOverloaded with willRetry false", () => {
  const e = eventsOn("codex-503");
  const overloaded: ErrorReport = { code: "serverOverloaded", message: "Selected model is at capacity. Please try a different model." };
  const events = (settings?: RadarEvent["settings"]): RadarEvent[] => [
    e("thread.started", 0),
    ...(settings ? [e("settings.changed", 0, { settings })] : []),
    e("turn.started", 38, { turnId: "turn-c" }),
    e("retry", 3137, { turnId: "turn-c", willRetry: false, error: overloaded }),
    e("turn.failed", 3147, { turnId: "turn-c", error: overloaded }),
  ];

  it("is failed with kind capacity; nothing is scheduled when recovery is off (the default)", () => {
    expect(feed(events(), 30 * MIN)).toMatchObject({ status: "failed", lastError: { kind: "capacity", code: "serverOverloaded" }, recovery: null, wakeAt: null });
  });
  it("with capacity recovery opted in, a continuation is scheduled and then sent as a continue directive", () => {
    const scheduled = feed(events({ capacityRecovery: true }));
    expect(scheduled).toMatchObject({ status: "recovery_scheduled", recovery: { attempt: 1, max: 3, state: "scheduled" } });
    const fired = withEffects(tick(scheduled, scheduled.recovery!.dueAt));
    expect(fired.directives).toEqual([expect.objectContaining({ kind: "continue", turnId: "turn-c", origin: "recovery" })]);
  });
});

describe("Claude Code: api_retry 429 twice with retry_delay_ms 2000, then the reply", () => {
  const e = eventsOn("claude-429");
  const notice = (attempt: number, at: number) =>
    e("retry", at, { attempt, maxAttempts: 10, delayMs: 2000, willRetry: true, error: { httpStatus: 429, code: "rate_limit" } });
  const events: RadarEvent[] = [
    e("thread.started", 1202, { agent: "claude-code", provider: "anthropic" }),
    notice(1, 1275),
    notice(2, 3292),
    e("progress", 5306),
    e("turn.completed", 5313),
  ];

  it("the announced delay is exact: next attempt 2 s after the notice, not an estimate, 2 of 10", () => {
    expect(feed(events.slice(0, 3)).retry).toMatchObject({ attempt: 2, maxAttempts: 10, nextAttemptAt: T0 + 5292, nextAttemptEstimated: false, advisedDelayMs: 2000 });
  });
  it("retries that keep to the announced delay are not early; the turn recovers and completes", () => {
    const s = feed(events, MIN);
    expect(s).toMatchObject({ status: "completed", episode: { outcome: "recovered", maxAttempts: 10 } });
    expect(s.episode?.attempts.map((a) => a.earlyByMs)).toEqual([null, null]);
  });
});

describe("Claude Code: api_retry 529 overloaded, attempts 1 to 10 of 10, then the give-up", () => {
  const e = eventsOn("claude-529");
  const delays = [577.5, 1232.9, 2276.4, 4499.6, 9824.3, 18977.5, 32535.7, 34625.8, 39100.8, 33427.4];
  const at = [1186, 1775, 3020, 5305, 9816, 19655, 38643, 71190, 105827, 144940];
  const events: RadarEvent[] = [
    e("thread.started", 1131, { agent: "claude-code" }),
    ...delays.map((delayMs, i) => e("retry", at[i], { attempt: i + 1, maxAttempts: 10, delayMs, willRetry: true, error: { httpStatus: 529, code: "overloaded" } })),
    e("turn.failed", 178_396, { error: { httpStatus: 529, message: "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment." } }),
  ];

  it("is retrying n/10 the whole time: the capacity default defers to Claude's own 10, and every exact delay keeps the deadline ahead", () => {
    for (let i = 1; i <= 10; i++) {
      const s = feed(events.slice(0, i + 1), at[i] ?? 178_000);
      expect(s).toMatchObject({ status: "retrying", retry: { kind: "capacity", attempt: i, maxAttempts: 10, nextAttemptEstimated: false } });
    }
  });
  it("ends failed with kind capacity after the 10th retry; no early retries were made", () => {
    const s = feed(events, 10 * MIN);
    expect(s).toMatchObject({ status: "failed", lastError: { kind: "capacity", httpStatus: 529 }, episode: { outcome: "failed", bound: 10 } });
    expect(s.episode?.attempts.every((a) => a.earlyByMs === null)).toBe(true);
  });
});

describe("bridge seed: resource_exhausted advised 2 s but the client retried after 0.232 s and 0.408 s", () => {
  const e = eventsOn("bridge");
  const refusal: ErrorReport = { code: "resource_exhausted", message: "Devin refused: retry after ~2s", details: { additionalDetails: "Please try again in 2s." } };
  const events: RadarEvent[] = [
    e("turn.started", 0, { turnId: "t" }),
    e("retry", 1000, { turnId: "t", error: refusal }),
    e("retry", 1232, { turnId: "t", error: refusal }),
    e("retry", 1640, { turnId: "t", error: refusal }),
  ];

  it("records each early retry on its attempt: 1.77 s and 1.59 s early", () => {
    const s = withEffects(feedStep(events));
    expect(s.episode?.attempts.map((a) => [a.n, a.advisedDelayMs, a.earlyByMs])).toEqual([
      [1, 2000, 1768],
      [2, 2000, 1592],
      [3, 2000, null],
    ]);
    expect(s.applied).toMatchObject({ earlyByMs: 1592, note: "retry 2 came 1.59 s early" });
  });
});

describe("lineage: a parent's bound cascades a stop to its subagent", () => {
  const parent = eventsOn("parent");
  const child = eventsOn("child");
  const parentEvents: RadarEvent[] = [parent("turn.started", 0, { turnId: "p1" }), parent("retry", SEC, { turnId: "p1", error: { httpStatus: 429 } })];
  const childEvents: RadarEvent[] = [child("thread.started", 0, { parentThreadId: "parent" }), child("turn.started", 500, { turnId: "c1" })];

  it("the parent's interrupt asks the server to stop every active descendant (cascade)", () => {
    expect(feedStep(parentEvents, 66 * SEC).effects.directives).toEqual([expect.objectContaining({ kind: "interrupt", cascade: true, turnId: "p1" })]);
  });
  it("the subagent, stopped by the cascade and never acknowledging, is abandoned (failed), and a later acknowledged stop returns it to idle", () => {
    const cascaded = withEffects(feedStep([...childEvents, child("stop.requested", 66 * SEC, { actor: "policy", reason: "parent thread parent: stalled" })]));
    expect(cascaded).toMatchObject({ status: "stopping", directives: [expect.objectContaining({ kind: "interrupt", turnId: "c1" })] });
    const abandoned = tick(cascaded, T0 + 126 * SEC).state;
    expect(abandoned).toMatchObject({ status: "failed", lastError: { code: "abandoned" } });
    const idle = feed([child("stop.requested", 5 * MIN, { actor: "alice" }), child("interrupt.ack", 5 * MIN + 10, { turnId: "c1" })], undefined, abandoned);
    expect(idle.status).toBe("idle");
  });
});
