import { describe, expect, it } from "vitest";
import { restarts } from "./restarts";

/** When a worker thread of the server that stopped starts again (restarts.ts), on an injected clock. */
describe("restarts", () => {
  const timing = { restartFirstMs: 1_000, restartLastMs: 8_000, healthyMs: 60_000 };

  it("waits longer after each stop, up to the last wait", () => {
    let now = 0;
    const life = restarts(timing, () => now);
    const waits = [];
    for (let i = 0; i < 6; i++) {
      life.ready();
      now += 5_000;
      waits.push(life.stopped());
    }
    expect(waits).toEqual([1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
  });

  it("one that ran healthy for a while before it stopped waits only the first wait again, as if it had never failed", () => {
    let now = 0;
    const life = restarts(timing, () => now);
    life.ready();
    expect(life.stopped()).toBe(1_000);
    life.ready();
    expect(life.stopped()).toBe(2_000);
    life.ready();
    now += 60_000;
    expect(life.stopped()).toBe(1_000);
  });
});
