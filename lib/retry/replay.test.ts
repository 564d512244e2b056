import { describe, expect, it } from "vitest";
import { seededRandom, shuffled } from "./random";
import { reduce, replay, tick } from "./reducer";
import { MIN, SEC, T0, eventsOn, feed, feedStep } from "./testing";
import type { RadarEvent, ThreadState } from "./types";

const OVERLOADED = { code: "serverOverloaded", message: "Selected model is at capacity." };

/** A thread that retries, recovers, fails on capacity with recovery on, and is stopped later. */
function history(threadId = "thread-r"): RadarEvent[] {
  const e = eventsOn(threadId);
  return [
    e("thread.started", 0, { agent: "codex" }),
    e("settings.changed", 0, { settings: { capacityRecovery: true } }),
    e("turn.started", SEC, { turnId: "u1" }),
    e("retry", 2 * SEC, { turnId: "u1", error: { httpStatus: 429, retryAfter: "2" } }),
    e("retry", 4 * SEC, { turnId: "u1", error: { httpStatus: 429, retryAfter: "2" } }),
    e("progress", 7 * SEC, { turnId: "u1" }),
    e("retry", 8 * SEC, { turnId: "u1", willRetry: false, error: OVERLOADED }),
    e("turn.failed", 8 * SEC + 5, { turnId: "u1", error: OVERLOADED }),
    e("turn.started", 3 * MIN, { turnId: "c1" }),
    e("retry", 3 * MIN + SEC, { turnId: "c1", error: { httpStatus: 429 } }),
  ];
}

describe("replay: the same events at the same times give the same state", () => {
  const NOW = T0 + 10 * MIN;

  it("replaying twice gives identical states", () => {
    expect(replay(history(), NOW)).toEqual(replay(history(), NOW));
  });
  it("replay equals feeding the events live as they came, with the watchdog ticking", () => {
    expect(replay(history(), NOW)).toEqual(feed(history(), 10 * MIN));
  });
  it.each(["a", "b", "c", "d", "e", "f"])("events delivered out of order (shuffle %s) are ordered by event time, then sequence", (seed) => {
    expect(replay(shuffled(history(), seed), NOW)).toEqual(replay(history(), NOW));
  });
  it("events at the same instant are ordered by sequence", () => {
    const e = eventsOn("tie");
    const same = [e("turn.started", SEC, { turnId: "u1" }), e("retry", SEC, { turnId: "u1", error: { httpStatus: 429 } }), e("progress", SEC, { turnId: "u1" })];
    expect(replay([same[2], same[0], same[1]], NOW)).toMatchObject({ status: "recovered", episode: { outcome: "recovered" } });
  });
  it("a deadline that passed between two events fires at its own time, not at the next event", () => {
    const e = eventsOn("gap");
    const s = replay([e("turn.started", 0, { turnId: "u1" }), e("retry", SEC, { turnId: "u1", error: { httpStatus: 429 } }), e("unknown", 5 * MIN)], NOW);
    expect(s).toMatchObject({ status: "broken", episode: { outcome: "exhausted", endedAt: T0 + 66 * SEC }, interrupt: { requestedAt: T0 + 66 * SEC, graceEndsAt: T0 + 126 * SEC } });
  });
  it("timers do not fire past `now`, even for an event stamped later (a skewed source clock)", () => {
    const e = eventsOn("skew");
    const s = replay([e("turn.started", 0, { turnId: "u1" }), e("retry", SEC, { turnId: "u1", error: { httpStatus: 429 } }), e("unknown", 5 * MIN)], T0 + 30 * SEC);
    expect(s.status).toBe("retrying");
  });
  it("a state stored mid-way (JSON) and reloaded ends where a straight replay ends", () => {
    const events = history();
    const stored = JSON.parse(JSON.stringify(feed(events.slice(0, 7)))) as ThreadState;
    const resumed = feed(events.slice(7), NOW - T0, stored);
    expect(resumed).toEqual(replay(events, NOW));
  });
  it("replay needs the events of one thread", () => {
    expect(() => replay([], NOW)).toThrow(RangeError);
    expect(() => replay([...history("a").slice(0, 1), ...history("b").slice(0, 1)], NOW)).toThrow(RangeError);
  });
});

describe("randomness is deterministic on replay", () => {
  const failed = (threadId: string) => history(threadId).slice(0, 8);

  it("the default jitter is seeded by thread and event: a replay draws the same recovery time", () => {
    const first = replay(failed("thread-r"), T0 + 9 * SEC).recovery!.dueAt;
    expect(replay(failed("thread-r"), T0 + 9 * SEC).recovery!.dueAt).toBe(first);
  });
  it("different threads draw different waits", () => {
    const dues = ["a", "b", "c", "d"].map((id) => replay(failed(id), T0 + 9 * SEC).recovery!.dueAt);
    expect(new Set(dues).size).toBeGreaterThan(1);
  });
  it("an injected random source decides the draw", () => {
    expect(replay(failed("x"), T0 + 9 * SEC, () => () => 0).recovery!.dueAt).toBe(T0 + 8 * SEC + 30 * SEC);
  });
  it("seededRandom gives the same sequence for the same key, values in [0, 1)", () => {
    const a = seededRandom("thread-1:42");
    const b = seededRandom("thread-1:42");
    const values = Array.from({ length: 1000 }, () => a());
    expect(values).toEqual(Array.from({ length: 1000 }, () => b()));
    expect(values.every((v) => v >= 0 && v < 1)).toBe(true);
    expect(seededRandom("thread-1:43")()).not.toBe(values[0]);
  });
});

describe("directive keys are deterministic, so a replay never duplicates a directive", () => {
  it.each<[string, (e: ReturnType<typeof eventsOn>) => RadarEvent[], number, string]>([
    ["the bound's interrupt", (e) => [e("turn.started", 0, { turnId: "u1" }), e("retry", SEC, { turnId: "u1", error: { httpStatus: 429 } })], 66 * SEC, "k:u1:ep1:interrupt"],
    ["an operator stop", (e) => [e("turn.started", 0, { turnId: "u1" }), e("stop.requested", SEC)], SEC, "k:u1:stop2"],
    [
      "a recovery continuation",
      (e) => [
        e("settings.changed", 0, { settings: { capacityRecovery: true } }),
        e("turn.started", 0, { turnId: "u1" }),
        e("turn.failed", SEC, { turnId: "u1", error: OVERLOADED }),
      ],
      2 * MIN,
      "k:u1:recovery1:continue",
    ],
  ])("%s", (_name, events, until, key) => {
    const keys = () => {
      const e = eventsOn("k");
      const fed = feedStep(events(e));
      const ticked = tick(fed.state, T0 + until);
      return [...fed.effects.directives, ...ticked.effects.directives].map((d) => d.key);
    };
    expect(keys()).toEqual([key]);
    expect(keys()).toEqual(keys());
  });
});
