import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/e2e/support/in-process";
import { PATIENCE_MS } from "@/e2e/support/patience";
import { waitFor } from "@/e2e/support/relay-helpers";
import { startWalCheckpointer, type CheckpointerTiming, type WalCheckpointer } from "./wal-checkpointer";

/**
 * The listener's side of the WAL checkpointer, against stand-ins for its thread (fixtures/): while
 * it runs, this thread's commits leave checkpoints to it; whenever it cannot (starting, stopped,
 * silent), they checkpoint again, so the WAL never grows without bound.
 */
useFreshDatabase("wal-checkpointer");

const fixture = (name: string) => path.join(import.meta.dirname, "fixtures", name);
// A restart waits longer than a poll of `until` (5 ms), so a poll always sees the stop before the restart.
const FAST: Partial<CheckpointerTiming> = { everyMs: 10, restartFirstMs: 300, restartLastMs: 300, silentMs: 200 };
let client: typeof import("@/lib/db/client");
let checkpointer: WalCheckpointer | null = null;
beforeAll(async () => {
  client = await import("@/lib/db/client");
});
afterEach(async () => {
  await checkpointer?.stop();
  checkpointer = null;
});
afterAll(() => client.checkpointsByThread(null));

/** SQLite's setting on the server's connection: 0 while commits leave checkpoints to the checkpointer. */
const autocheckpoint = () => client.db().sql.pragma("wal_autocheckpoint", { simple: true });
const started = (name: string) => (checkpointer = startWalCheckpointer(fixture(name), client.db().path, FAST));
const until = (condition: () => boolean, what: string) => waitFor(condition, PATIENCE_MS, () => what, 5);

describe("the WAL checkpointer, seen from the listener", () => {
  it("takes the checkpoints over once ready, and its reports reach the metrics", async () => {
    expect(autocheckpoint()).toBe(1_000);
    const running = started("fake-checkpointer.mjs");
    await until(() => running.running(), "it never became ready");
    expect(autocheckpoint()).toBe(0);
    await until(() => client.walCheckpoints().framesLeft === 2, "no report reached the metrics");
    expect(client.walCheckpoints().byThread).toBe(true);
  });

  it("one that stopped leaves the checkpoints to commits until it is restarted", async () => {
    const running = started("crashing-checkpointer.mjs");
    await until(() => running.running(), "it never became ready");
    await until(() => !running.running(), "its failure was never noticed");
    expect(autocheckpoint()).toBe(1_000);
    expect(client.walCheckpoints()).toEqual({ byThread: false, framesLeft: null });
    await until(() => running.running(), "it was never restarted");
    expect(autocheckpoint()).toBe(0);
  });

  it("one that went silent is ended and restarted, commits checkpointing meanwhile", async () => {
    const running = started("silent-checkpointer.mjs");
    await until(() => running.running(), "it never became ready");
    await until(() => autocheckpoint() === 1_000, "its silence was never noticed");
    await until(() => !running.running(), "it was never ended");
    await until(() => running.running(), "it was never restarted");
  });

  it("stopped for good, it leaves the checkpoints to commits and never restarts", async () => {
    const running = started("fake-checkpointer.mjs");
    await until(() => running.running(), "it never became ready");
    await running.stop();
    expect(autocheckpoint()).toBe(1_000);
    await new Promise((resolve) => setTimeout(resolve, 2 * FAST.restartFirstMs!));
    expect(running.running()).toBe(false);
    expect(autocheckpoint()).toBe(1_000);
  });
});
