import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/e2e/support/in-process";
import { PATIENCE_MS } from "@/e2e/support/patience";
import { waitFor } from "@/e2e/support/relay-helpers";
import type { SupervisedWorker } from "./supervised-worker";
import { superviseCheckpointer, type CheckpointerTiming } from "./wal-checkpointer";

/**
 * The listener's side of the WAL checkpointer, against stand-ins for its thread (fixtures/): while
 * it runs, this thread's commits leave checkpoints to it; whenever it cannot (starting, stopped,
 * silent), they checkpoint as by default again, so the WAL never grows without bound.
 */
useFreshDatabase("wal-checkpointer");

const fixture = (name: string) => path.join(import.meta.dirname, "fixtures", name);
// A restart waits longer than a poll of `until` (5 ms), so a poll always sees the stop before the
// restart; silence is only ever looked for in the test about it.
const FAST: Partial<CheckpointerTiming> = { everyMs: 10, restartFirstMs: 300, restartLastMs: 300, silentMs: 60_000 };
let client: typeof import("@/lib/db/client");
let checkpointer: SupervisedWorker | null = null;
// Every start of a stand-in, as it announces it.
const starts = new BroadcastChannel("radar-test-checkpointer");
let started = 0;
starts.onmessage = () => void started++;
beforeAll(async () => {
  client = await import("@/lib/db/client");
});
afterEach(async () => {
  await checkpointer?.stop();
  checkpointer = null;
});
afterAll(() => {
  starts.close();
  client.checkpointsByThread(null);
});

/** SQLite's setting on the server's connection: 1,000 when commits checkpoint; while the checkpointer runs, only a backstop far past it. */
const autocheckpoint = () => client.db().sql.pragma("wal_autocheckpoint", { simple: true }) as number;
const DEFAULT_PAGES = 1_000;
const supervised = (name: string, timing: Partial<CheckpointerTiming> = {}) =>
  (checkpointer = superviseCheckpointer(fixture(name), client.db().path, { ...FAST, ...timing }));
const until = (condition: () => boolean, what: string) => waitFor(condition, PATIENCE_MS, () => what, 5);

describe("the WAL checkpointer, seen from the listener", () => {
  it("takes the checkpoints over once ready, and its reports reach the metrics", async () => {
    expect(autocheckpoint()).toBe(DEFAULT_PAGES);
    const running = supervised("fake-checkpointer.mjs");
    await until(() => running.isUp(), "it never became ready");
    expect(autocheckpoint()).toBeGreaterThan(10 * DEFAULT_PAGES);
    await until(() => client.walCheckpoints().framesLeft === 2, "no report reached the metrics");
    expect(client.walCheckpoints()).toEqual({ byThread: true, walFrames: 5, framesLeft: 2 });
  });

  it("one that stopped leaves the checkpoints to commits until it is restarted", async () => {
    const running = supervised("crashing-checkpointer.mjs");
    await until(() => running.isUp(), "it never became ready");
    await until(() => !running.isUp(), "its failure was never noticed");
    expect(autocheckpoint()).toBe(DEFAULT_PAGES);
    expect(client.walCheckpoints()).toEqual({ byThread: false, walFrames: null, framesLeft: null });
    await until(() => running.isUp(), "it was never restarted");
    expect(autocheckpoint()).toBeGreaterThan(10 * DEFAULT_PAGES);
  });

  it("one that went silent is ended and restarted, commits checkpointing meanwhile", async () => {
    const running = supervised("silent-checkpointer.mjs", { silentMs: 200 });
    await until(() => running.isUp(), "it never became ready");
    await until(() => !running.isUp(), "its silence was never noticed");
    expect(autocheckpoint()).toBe(DEFAULT_PAGES);
    await until(() => running.isUp(), "it was never restarted");
  });

  it("stopped for good, even while it waits to restart, it leaves the checkpoints to commits and never starts again", async () => {
    const before = started;
    const running = supervised("crashing-checkpointer.mjs");
    await until(() => running.isUp(), "it never became ready");
    await until(() => !running.isUp(), "its failure was never noticed");
    await running.stop();
    expect(autocheckpoint()).toBe(DEFAULT_PAGES);
    // Nothing to wait for but the time its restart would have taken: three times over.
    await new Promise((resolve) => setTimeout(resolve, 3 * FAST.restartFirstMs!));
    expect(started - before).toBe(1);
    expect(running.isUp()).toBe(false);
    expect(autocheckpoint()).toBe(DEFAULT_PAGES);
  });
});
