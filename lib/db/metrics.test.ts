import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandles } from "./client";
import { M, NOW, openSeeded } from "./fixture";
import { metricsSnapshot } from "./metrics";

let handles: DatabaseHandles;
let close: () => Promise<void>;

beforeAll(() => {
  ({ handles, close } = openSeeded());
});

afterAll(() => close());

describe("metrics snapshot", () => {
  it("aggregates the whole database by low-cardinality labels", async () => {
    const s = await metricsSnapshot(NOW, handles.sql);
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

