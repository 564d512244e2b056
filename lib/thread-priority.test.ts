import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * lowerThreadPriority, in a process of its own (the priority it lowers cannot be raised back, so
 * never on the test runner's thread): only the calling thread's nice value changes, a second call
 * never raises it again, and no call throws.
 */
const linux = fs.existsSync("/proc/thread-self");
const MODULE = path.join(import.meta.dirname, "thread-priority.ts");
const SCRIPT = `
  const fs = await import("node:fs");
  const { lowerThreadPriority } = await import(${JSON.stringify(MODULE)});
  const nices = () => fs.readdirSync("/proc/self/task").map((tid) => {
    const stat = fs.readFileSync("/proc/self/task/" + tid + "/stat", "utf8");
    return { main: Number(tid) === process.pid, nice: Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]) };
  });
  const before = nices().find((t) => t.main).nice;
  const first = lowerThreadPriority(5);
  const second = lowerThreadPriority(3);
  console.log(JSON.stringify({ before, first, second, nices: nices() }));
`;

describe.runIf(linux)("lowerThreadPriority", () => {
  it("lowers the calling thread alone, and never raises it again", () => {
    const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", SCRIPT], { encoding: "utf8" });
    const { before, first, second, nices } = JSON.parse(out) as { before: number; first: number; second: number; nices: { main: boolean; nice: number }[] };
    // A runner started niced passes its nice value on: lowering to 5 then means at least that.
    const lowered = Math.max(before, 5);
    expect(first).toBe(lowered);
    expect(second).toBe(lowered);
    expect(nices.find((t) => t.main)?.nice).toBe(lowered);
    // V8's and libuv's threads, started before the call, keep the priority they had.
    const others = nices.filter((t) => !t.main);
    expect(others.length).toBeGreaterThan(0);
    expect(others.every((t) => t.nice === before)).toBe(true);
    // A process started with tsx: allowed the time a busy machine takes.
  }, 60_000);
});
