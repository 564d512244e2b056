import { describe, expect, it } from "vitest";
import { ownWorkMs } from "./loop-delay.mjs";

// The first four are gaps the bench's loop trace recorded on this VM (RADAR_BENCH_LOOP_TRACE).
describe("ownWorkMs: what of a gap between two ticks the thread's own work may have been", () => {
  it.each([
    { gap: 10.9, idle: 0, waited: 0, own: 10.9, why: "busy throughout: all of it" },
    { gap: 16.1, idle: 0.4, waited: 15, own: 1.1, why: "preempted while busy: the wait for a core is left out" },
    { gap: 8, idle: 7.6, waited: 2.4, own: 0.4, why: "a late wake-up from idle: the idle time is left out" },
    { gap: 9.1, idle: 9.1, waited: 8.9, own: 0, why: "the wake-up's wait for a core is in both counts: left out once" },
    { gap: 1, idle: 1.2, waited: 0, own: 0, why: "never below zero (the counters are read a few microseconds apart)" },
  ])("$why", ({ gap, idle, waited, own }) => {
    expect(ownWorkMs(gap, idle, waited)).toBeCloseTo(own, 6);
  });
});
