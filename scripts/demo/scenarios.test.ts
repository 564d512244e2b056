import { describe, expect, it } from "vitest";
import { clockTime, fleetSchedule, type ScheduledActor } from "./scenarios";

function take(seed: number, n: number, runTag = "t"): ScheduledActor[] {
  const out: ScheduledActor[] = [];
  for (const a of fleetSchedule(seed, runTag)) {
    out.push(a);
    if (out.length >= n) break;
  }
  return out;
}

// Functions (events computed at emission time) drop out of JSON: compare the data.
const data = (x: unknown) => JSON.parse(JSON.stringify(x));

describe("demo fleet schedule", () => {
  it("is deterministic given the seed (and run tag), and differs across seeds", () => {
    expect(data(take(7, 40))).toEqual(data(take(7, 40)));
    expect(data(take(7, 40))).not.toEqual(data(take(8, 40)));
    // The run tag changes ids only, not the scenarios or their timing.
    const a = take(7, 40, "a");
    const b = take(7, 40, "b");
    expect(a.map((x) => [x.startMs, x.plan.scenario, x.plan.steps.length])).toEqual(b.map((x) => [x.startMs, x.plan.scenario, x.plan.steps.length]));
    expect(a[0].plan.meta.threadId).not.toBe(b[0].plan.meta.threadId);
  });

  it("opens with every kind of trouble within seconds, with varied agents, providers and models", () => {
    const opening = take(3, 60).filter((a) => a.startMs < 5_000);
    const scenarios = new Set(opening.map((a) => a.plan.scenario));
    for (const s of ["rate-limit-advised", "usage-limit", "long-wait", "capacity-storm", "claude-overloaded", "stall", "subagents", "native-codex", "rate-limit-early"]) {
      expect(scenarios).toContain(s);
    }
    const all = take(3, 200).map((a) => a.plan.meta);
    expect(new Set(all.map((m) => m.agent))).toEqual(new Set(["codex", "claude-code", "recipe-runner"]));
    expect(new Set(all.map((m) => m.provider))).toEqual(new Set(["openai", "anthropic", "openrouter", "litellm-proxy"]));
    expect(new Set(all.map((m) => m.model)).size).toBeGreaterThan(6);
    expect(new Set(all.map((m) => m.threadId)).size).toBe(all.length);
  });

  it("spawns subagents with their parent's thread id", () => {
    const parent = take(3, 200).find((a) => a.plan.scenario === "subagents")!.plan;
    const children = parent.steps.flatMap((s) => s.spawn ?? []);
    expect(children.length).toBeGreaterThanOrEqual(2);
    for (const c of children) expect(c.meta.parentThreadId).toBe(parent.meta.threadId);
  });

  it("fills a usage window up to its refusal, with the reset the refusal names", () => {
    const plan = take(3, 200).find((a) => a.plan.scenario === "usage-limit")!.plan;
    const now = Date.UTC(2026, 0, 1, 17, 0);
    const bodies = plan.steps.flatMap((s) => s.events ?? []).map((e) => (typeof e === "function" ? e(now) : e));
    const windows = bodies.filter((e) => e.type === "limit.updated");
    expect(windows.map((w) => w.usedPercent)).toEqual([expect.any(Number), 100]);
    expect((windows[0].usedPercent as number) >= 90).toBe(true);
    const failed = bodies.find((e) => e.type === "turn.failed")!;
    expect(JSON.stringify(failed)).toContain(clockTime(windows[1].resetsAt as number));
  });

  it("writes usage-limit reset times the way Codex does, in UTC", () => {
    expect(clockTime(Date.UTC(2026, 0, 1, 17, 59))).toBe("5:59 PM");
    expect(clockTime(Date.UTC(2026, 0, 1, 0, 5))).toBe("12:05 AM");
    expect(clockTime(Date.UTC(2026, 0, 1, 12, 0))).toBe("12:00 PM");
  });
});
