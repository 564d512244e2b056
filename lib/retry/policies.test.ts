import { describe, expect, it } from "vitest";
import {
  PRESETS,
  baseDelayMs,
  defaultPolicyFor,
  drawDelayMs,
  expectedWindow,
  isOverCap,
  preset,
  resolvePolicy,
  validatePolicy,
  type PresetName,
} from "./policies";
import { seededRandom } from "./random";
import { MIN, SEC } from "./testing";
import type { PolicyDefinition, TroubleKind } from "./types";

const stallBound = preset("codex-429-stall-bound");
const capacity = preset("codex-capacity");
const recipe = preset("recipe-runner");
const recovery = preset("capacity-recovery");
const native = preset("codex-native");

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe("the presets carry exactly the numbers of the policy table", () => {
  it.each<[PresetName, TroubleKind[], number, number | null, number | null]>([
    ["codex-429-stall-bound", ["rate_limit"], 5, 300 * SEC, 60 * SEC],
    ["codex-capacity", ["capacity"], 3, null, 60 * SEC],
    ["recipe-runner", ["rate_limit"], 5, null, 60 * SEC],
    ["capacity-recovery", ["capacity"], 3, null, null],
    ["codex-native", ["transport"], 5, null, 60 * SEC],
  ])("%s governs %j, allows %i retries, caps advice at %j and adds %j grace", (name, kinds, maxAttempts, adviceCapMs, graceMs) => {
    expect(PRESETS[name]).toMatchObject({ name, kinds, maxAttempts, adviceCapMs, graceMs });
  });

  it.each<[string, PolicyDefinition, number[]]>([
    ["codex-429-stall-bound without advice: 5 s doubling, capped at 300 s", stallBound, [5, 10, 20, 40, 80, 160, 300, 300]],
    ["codex-capacity: at least 30 s, 120 s, 300 s (the last repeats)", capacity, [30, 120, 300, 300]],
    ["recipe-runner: min(60 s·2^(n−1), 600 s)", recipe, [60, 120, 240, 480, 600, 600]],
    ["capacity-recovery: bases of 1, 4 and 15 min", recovery, [60, 240, 900]],
    ["codex-native: 200 ms·2^(n−1)", native, [0.2, 0.4, 0.8, 1.6, 3.2]],
  ])("%s", (_name, policy, seconds) => {
    expect(upTo(seconds.length).map((n) => baseDelayMs(policy, n))).toEqual(seconds.map((s) => s * SEC));
  });

  it("only capacity-recovery is a continuation policy", () => {
    expect(Object.values(PRESETS).filter((p) => "continuation" in p && p.continuation).map((p) => p.name)).toEqual(["capacity-recovery"]);
  });
});

describe("the default policy per kind when none is named", () => {
  it.each<[TroubleKind, string | null]>([
    ["rate_limit", "codex-429-stall-bound"],
    ["capacity", "codex-capacity"],
    ["transport", "codex-native"],
    ["usage_limit", null],
    ["auth", null],
    ["invalid_request", null],
    ["other", null],
  ])("%s → %s", (kind, name) => {
    expect(defaultPolicyFor(kind)?.name ?? null).toBe(name);
  });
});

describe("codex-429-stall-bound worked figures", () => {
  it("without advice the worst case before giving up is 455 s (65 + 70 + 80 + 100 + 140)", () => {
    const deadlines = upTo(5).map((n) => expectedWindow(stallBound, n, null)!.deadlineMs!);
    expect(deadlines).toEqual([65, 70, 80, 100, 140].map((s) => s * SEC));
    expect(sum(deadlines)).toBe(455 * SEC);
  });
  it("with advice at the 300 s cap on every attempt it gives up after 1800 s", () => {
    const deadlines = upTo(5).map((n) => expectedWindow(stallBound, n, { delayMs: 300 * SEC })!.deadlineMs!);
    expect(sum(deadlines)).toBe(1800 * SEC);
  });
  it.each<[number, boolean]>([
    [300 * SEC, false],
    [300 * SEC + 1, true],
    [3600 * SEC, true],
  ])("advice of %i ms is over the cap: %s", (delayMs, over) => {
    expect(isOverCap(stallBound, delayMs)).toBe(over);
  });
  it("a Retry-After is the expected delay itself, an estimate of when the source retries", () => {
    expect(expectedWindow(stallBound, 3, { delayMs: 2 * SEC })).toEqual({ earliestMs: 2 * SEC, latestMs: 2 * SEC, deadlineMs: 62 * SEC, estimated: true });
  });
});

describe("codex-capacity worked figures", () => {
  it.each<[number, number, number]>([
    [1, 30, 60],
    [2, 120, 240],
    [3, 300, 600],
  ])("retry %i is expected from %i s at the earliest to %i s at the latest, deadline latest + 60 s", (n, earliest, latest) => {
    expect(expectedWindow(capacity, n, null)).toEqual({ earliestMs: earliest * SEC, latestMs: latest * SEC, deadlineMs: (latest + 60) * SEC, estimated: true });
  });
  it.each(["a", "b", "c", "d", "e"])("total wait drawn with jitter lies in [7.5 min, 15 min) (seed %s)", (seed) => {
    const random = seededRandom(seed);
    const total = sum(upTo(3).map((n) => drawDelayMs(capacity, n, random)));
    expect(total).toBeGreaterThanOrEqual(7.5 * MIN);
    expect(total).toBeLessThan(15 * MIN);
  });
  it.each<[string, () => number, number]>([
    ["no jitter at all gives exactly 7.5 min", () => 0, 7.5 * MIN],
    ["the largest jitter stays just under 15 min", () => 0.999999, 15 * MIN - 3],
  ])("%s", (_name, random, total) => {
    expect(sum(upTo(3).map((n) => drawDelayMs(capacity, n, random)))).toBe(total);
  });
  it("advice shorter than the minimum does not shorten the wait: the schedule is a floor", () => {
    expect(expectedWindow(capacity, 1, { delayMs: 5 * SEC })).toMatchObject({ earliestMs: 30 * SEC, latestMs: 60 * SEC });
  });
  it("advice longer than the schedule moves the window", () => {
    expect(expectedWindow(capacity, 1, { delayMs: 90 * SEC })).toMatchObject({ earliestMs: 90 * SEC, latestMs: 90 * SEC });
  });
});

describe("recipe-runner worked figures", () => {
  it("waits 60, 120, 240, 480, 600 s for retries 1 to 5, each deadline that + 60 s grace", () => {
    expect(upTo(5).map((n) => expectedWindow(recipe, n, null))).toEqual(
      [60, 120, 240, 480, 600].map((s) => ({ earliestMs: s * SEC, latestMs: s * SEC, deadlineMs: (s + 60) * SEC, estimated: true })),
    );
  });
});

describe("capacity-recovery worked figures", () => {
  it.each<[number, number]>([
    [1, 1],
    [2, 4],
    [3, 15],
  ])("continuation %i waits between 50 % and 100 % of %i min", (k, minutes) => {
    for (const seed of ["x", "y", "z", "w"]) {
      const wait = drawDelayMs(recovery, k, seededRandom(seed));
      expect(wait).toBeGreaterThanOrEqual(minutes * MIN * 0.5);
      expect(wait).toBeLessThanOrEqual(minutes * MIN);
    }
    expect(drawDelayMs(recovery, k, () => 0)).toBe(minutes * MIN * 0.5);
  });
  it("has no deadline", () => {
    expect(expectedWindow(recovery, 1, null)!.deadlineMs).toBeNull();
  });
});

describe("codex-native worked figures", () => {
  it.each<[number, number, number]>([
    [1, 180, 220],
    [2, 360, 440],
    [5, 2880, 3520],
  ])("retry %i comes between %i ms and %i ms (200 ms·2^(n−1) ±10 %), deadline + 60 s", (n, earliest, latest) => {
    expect(expectedWindow(native, n, null)).toEqual({ earliestMs: earliest, latestMs: latest, deadlineMs: latest + 60 * SEC, estimated: true });
  });
});

describe("expected windows", () => {
  it("a source's own announced delay is exact, not an estimate, whatever the policy", () => {
    expect(expectedWindow(capacity, 1, { delayMs: 2000, exact: true })).toEqual({ earliestMs: 2000, latestMs: 2000, deadlineMs: 62 * SEC, estimated: false });
  });
  it("with no policy, advice alone gives an expectation and the default 60 s grace", () => {
    expect(expectedWindow(null, 1, { delayMs: 10 * MIN })).toEqual({ earliestMs: 10 * MIN, latestMs: 10 * MIN, deadlineMs: 11 * MIN, estimated: true });
  });
  it("with no policy and no advice there is nothing to expect", () => {
    expect(expectedWindow(null, 1, null)).toBeNull();
  });
});

describe("backoff arithmetic saturates and never overflows", () => {
  const steep: PolicyDefinition = { ...recipe, name: "steep", factor: 100, maxDelayMs: 7 * 24 * 60 * MIN };
  it.each<[string, PolicyDefinition, number, number]>([
    ["retry 1000 of recipe-runner is the 600 s cap", recipe, 1000, 600 * SEC],
    ["retry 2^31 of recipe-runner is the cap", recipe, 2 ** 31, 600 * SEC],
    ["a factor of 100 at retry 10,000 is the cap", steep, 10_000, 7 * 24 * 60 * MIN],
    ["a zero base is instant at any retry (recipe-runner's test mode)", { ...recipe, baseDelayMs: 0 }, 10_000, 0],
  ])("%s", (_name, policy, n, expected) => {
    const delay = baseDelayMs(policy, n);
    expect(delay).toBe(expected);
    expect(Number.isFinite(expectedWindow(policy, n, null)!.deadlineMs!)).toBe(true);
  });
  it.each([0, -1, 1.5, NaN])("retry index %s is rejected: n starts at 1", (n) => {
    expect(() => baseDelayMs(recipe, n)).toThrow(RangeError);
  });
});

describe("custom policies", () => {
  const custom = {
    name: "overnight",
    kinds: ["capacity", "rate_limit"],
    maxAttempts: null,
    baseDelayMs: 3 * SEC,
    factor: 2,
    maxDelayMs: 5 * MIN,
    jitterMin: 0,
    jitterMax: 1,
    adviceCapMs: null,
    graceMs: 60 * SEC,
  };
  it("a valid custom policy with unlimited attempts is accepted", () => {
    expect(validatePolicy(custom)).toEqual({ ok: true, policy: custom });
  });
  it("a custom policy resolves by value, a preset by name, anything else to null", () => {
    expect(resolvePolicy(custom as PolicyDefinition)).toEqual(custom);
    expect(resolvePolicy("recipe-runner")).toBe(PRESETS["recipe-runner"]);
    expect(resolvePolicy("no-such-preset")).toBeNull();
    expect(resolvePolicy({ ...custom, factor: -1 } as PolicyDefinition)).toBeNull();
  });
  it.each<[string, Record<string, unknown>, string]>([
    ["a missing name", { name: "" }, "name: expected 1–64 letters, digits, '.', '_' or '-'"],
    ["a preset's name", { name: "recipe-runner" }, 'name: "recipe-runner" is a preset; give a custom policy its own name'],
    ["no kinds", { kinds: [] }, "kinds: expected a non-empty list of rate_limit, capacity, usage_limit, transport, auth, invalid_request, other"],
    ["an unknown kind", { kinds: ["weather"] }, "kinds: expected a non-empty list of rate_limit, capacity, usage_limit, transport, auth, invalid_request, other"],
    ["zero attempts", { maxAttempts: 0 }, "maxAttempts: expected an integer from 1 to 1000, or null for unlimited"],
    ["fractional attempts", { maxAttempts: 2.5 }, "maxAttempts: expected an integer from 1 to 1000, or null for unlimited"],
    ["a negative base", { baseDelayMs: -1 }, "baseDelayMs: expected milliseconds between 0 and 604800000 (7 days)"],
    ["an infinite cap", { maxDelayMs: Infinity }, "maxDelayMs: expected milliseconds between 0 and 604800000 (7 days)"],
    ["a cap below the base", { baseDelayMs: 10 * SEC, maxDelayMs: SEC }, "maxDelayMs: must not be below baseDelayMs"],
    ["a shrinking factor", { factor: 0.5 }, "factor: expected a number from 1 to 100"],
    ["an empty schedule", { scheduleMs: [] }, "scheduleMs: expected a non-empty list of milliseconds between 0 and 7 days"],
    ["jitter below −100 %", { jitterMin: -2 }, "jitterMin: expected a fraction from -1 to 10"],
    ["jitterMax below jitterMin", { jitterMin: 0.5, jitterMax: 0 }, "jitterMax: must not be below jitterMin"],
    ["a NaN advice cap", { adviceCapMs: NaN }, "adviceCapMs: expected milliseconds between 0 and 604800000 (7 days) or null"],
    ["a string grace", { graceMs: "60s" }, "graceMs: expected milliseconds between 0 and 604800000 (7 days) or null"],
    ["a non-boolean continuation", { continuation: "yes" }, "continuation: expected true or false"],
  ])("rejects %s with a clear error", (_name, change, error) => {
    const result = validatePolicy({ ...custom, ...change });
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.errors).toContain(error);
  });
  it.each([null, "recipe-runner", [1, 2], 42])("rejects a non-object %j", (input) => {
    expect(validatePolicy(input)).toEqual({ ok: false, errors: ["policy: expected an object"] });
  });
  it("an unlimited policy never runs out of attempts and its delays stay capped", () => {
    const policy = validatePolicy(custom);
    expect(policy.ok && policy.policy.maxAttempts).toBeNull();
    expect(baseDelayMs(custom as PolicyDefinition, 1_000_000)).toBe(5 * MIN);
  });
});
