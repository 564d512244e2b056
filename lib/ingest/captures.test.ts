/**
 * End to end through the pure data path: shared capture → parseCapture → normalizeBatch →
 * the engine's replay. Asserts what an operator would see for each real-client capture.
 */
import { describe, expect, it } from "vitest";
import { replay } from "../retry/reducer";
import type { RadarEvent, ThreadState } from "../retry/types";
import { captureNames, normalizeCapture } from "./test-fixtures";

function eventsOf(name: string): RadarEvent[] {
  const { result } = normalizeCapture(name);
  expect(result.rejected).toEqual([]);
  return result.lines.flatMap((l, i) => (l.event ? [{ ...l.event, seq: i + 1 }] : []));
}

const lastAt = (events: RadarEvent[]) => Math.max(...events.map((e) => e.at));

/** State at the end of the capture, and the same a long while later (watchdog ticks included). */
function finalStates(name: string): { end: ThreadState; later: ThreadState; events: RadarEvent[] } {
  const events = eventsOf(name);
  const t = lastAt(events);
  return { end: replay(events, t + 1000), later: replay(events, t + 6 * 3_600_000), events };
}

/** State right after the i-th event of a type (1-based), replayed at that moment. */
function stateAfter(events: RadarEvent[], type: string, nth: number): ThreadState {
  let seen = 0;
  const idx = events.findIndex((e) => e.type === type && ++seen === nth);
  expect(idx).toBeGreaterThanOrEqual(0);
  const prefix = events.slice(0, idx + 1);
  return replay(prefix, events[idx].at);
}

const attemptNs = (s: ThreadState) => s.episode?.attempts.map((a) => a.n);

describe("captures replayed through the reducer", () => {
  it("covers every shared capture", () => {
    expect(captureNames()).toEqual([
      "claude-a429-then-ok",
      "claude-a529-overloaded",
      "codex-appserver-429-then-ok",
      "codex-appserver-503-capacity",
      "codex-exec-429-always",
      "codex-exec-429-then-ok",
    ]);
  });

  it("codex-appserver-429-then-ok: retrying 2/5 rate_limit, then recovered and completed", () => {
    const { end, later, events } = finalStates("codex-appserver-429-then-ok");
    const mid = stateAfter(events, "retry", 2);
    expect(mid.status).toBe("retrying");
    expect(mid.retry).toMatchObject({ kind: "rate_limit", attempt: 2, maxAttempts: 5 });
    expect(end.status).toBe("completed");
    expect(end.episode).toMatchObject({ kind: "rate_limit", outcome: "recovered", maxAttempts: 5 });
    expect(attemptNs(end)).toEqual([1, 2]);
    expect(end.episode!.attempts.map((a) => [a.httpStatus, a.code])).toEqual([
      [429, "responseStreamDisconnected"],
      [429, "responseStreamDisconnected"],
    ]);
    expect(end).toMatchObject({ provider: "mock", model: "gpt-5.5", agent: "codex", turnOpen: false });
    expect(later.status).toBe("completed");
  });

  it("codex-appserver-503-capacity: failed, capacity, serverOverloaded (no retry notice at all)", () => {
    const { end, later } = finalStates("codex-appserver-503-capacity");
    expect(end.status).toBe("failed");
    expect(end.episode).toMatchObject({ kind: "capacity", outcome: "failed", outcomeCode: "serverOverloaded" });
    expect(end.episode!.attempts).toEqual([]);
    expect(end.lastError).toMatchObject({ kind: "capacity", code: "serverOverloaded" });
    expect(end.episodeCount).toBe(1);
    expect(end.turnOpen).toBe(false);
    expect(later.status).toBe("failed");
  });

  it("codex-exec-429-always: attempts 1..5 of 5 (rate_limit), then failed", () => {
    const { end, later, events } = finalStates("codex-exec-429-always");
    for (let n = 1; n <= 5; n++) {
      const mid = stateAfter(events, "retry", n);
      expect(mid.status).toBe("retrying");
      expect(mid.retry).toMatchObject({ kind: "rate_limit", attempt: n, maxAttempts: 5 });
    }
    expect(end.status).toBe("failed");
    expect(end.episode).toMatchObject({ kind: "rate_limit", outcome: "failed", maxAttempts: 5 });
    expect(attemptNs(end)).toEqual([1, 2, 3, 4, 5]);
    expect(end.lastError).toMatchObject({ kind: "rate_limit", message: expect.stringContaining("exceeded retry limit") });
    expect(end.episodeCount).toBe(1);
    expect(later.status).toBe("failed");
  });

  it("codex-exec-429-then-ok: recovered after attempt 2 of 5, completed", () => {
    const { end } = finalStates("codex-exec-429-then-ok");
    expect(end.status).toBe("completed");
    expect(end.episode).toMatchObject({ kind: "rate_limit", outcome: "recovered", maxAttempts: 5 });
    expect(attemptNs(end)).toEqual([1, 2]);
    expect(end).toMatchObject({ agent: "codex-exec", provider: "openai" });
  });

  it("claude-a429-then-ok: 2 of 10 rate_limit retries with the exact 2 s delay, then completed", () => {
    const { end, events } = finalStates("claude-a429-then-ok");
    const mid = stateAfter(events, "retry", 2);
    expect(mid.status).toBe("retrying");
    expect(mid.retry).toMatchObject({ kind: "rate_limit", attempt: 2, maxAttempts: 10, nextAttemptEstimated: false });
    expect(mid.retry!.nextAttemptAt).toBe(events.filter((e) => e.type === "retry")[1].at + 2000);
    expect(end.status).toBe("completed");
    expect(end.episode).toMatchObject({ kind: "rate_limit", outcome: "recovered", maxAttempts: 10 });
    expect(end.episode!.attempts.map((a) => [a.n, a.advisedDelayMs, a.httpStatus, a.code])).toEqual([
      [1, 2000, 429, "rate_limit"],
      [2, 2000, 429, "rate_limit"],
    ]);
    expect(end).toMatchObject({ agent: "claude-code", provider: "anthropic", model: "claude-opus-4-8[1m]" });
  });

  it("claude-a529-overloaded: 10 capacity attempts, then failed with 529", () => {
    const { end, later, events } = finalStates("claude-a529-overloaded");
    const mid = stateAfter(events, "retry", 10);
    expect(mid.status).toBe("retrying");
    expect(mid.retry).toMatchObject({ kind: "capacity", attempt: 10, maxAttempts: 10 });
    expect(end.status).toBe("failed");
    expect(end.episode).toMatchObject({ kind: "capacity", outcome: "failed", maxAttempts: 10 });
    expect(attemptNs(end)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(end.episode!.attempts.every((a) => a.httpStatus === 529 && a.code === "overloaded")).toBe(true);
    expect(end.lastError).toMatchObject({ kind: "capacity", httpStatus: 529 });
    expect(end.episodeCount).toBe(1);
    expect(later.status).toBe("failed");
  });

  it("a 429 capture cut after its first notice (a silent backoff): exhausted past the deadline, broken when the stop is never acknowledged", () => {
    const events = eventsOf("codex-appserver-429-then-ok");
    const firstRetry = events.findIndex((e) => e.type === "retry");
    const cut = events.slice(0, firstRetry + 1);
    const waiting = replay(cut, events[firstRetry].at + 1000);
    expect(waiting.status).toBe("retrying");
    const deadline = waiting.retry!.deadlineAt!;
    const s = replay(cut, deadline + 1000);
    expect(s.status).toBe("exhausted");
    expect(s.episode).toMatchObject({ kind: "rate_limit", outcome: "exhausted", outcomeCode: "rateLimitRetryExhausted" });
    expect(s.interrupt).toMatchObject({ origin: "policy", result: "pending" });
    expect(replay(cut, events[firstRetry].at + 3_600_000).status).toBe("broken");
  });

  it("replaying the same capture twice gives the same state", () => {
    for (const name of captureNames()) {
      const a = finalStates(name).end;
      const b = finalStates(name).end;
      expect(b).toEqual(a);
    }
  });
});
