import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { COALESCE_MS, publishDirectivesPending, publishThreadChanges, subscribe, type ThreadsChanged } from "./bus";

/** The live-update protocol's publication side: changed keys, coalesced with a leading edge. */
describe("thread changes on the bus", () => {
  let received: ThreadsChanged["threads"][];
  let unsubscribe: () => void;
  beforeEach(() => {
    vi.useFakeTimers();
    received = [];
    unsubscribe = subscribe("threads", (message) => received.push(message.threads));
  });
  afterEach(() => {
    unsubscribe();
    // Close any window a test left open.
    vi.runAllTimers();
    vi.useRealTimers();
  });

  it("the first change after a quiet spell goes out at once (leading edge)", () => {
    publishThreadChanges([{ key: 1, reorder: false }]);
    expect(received).toEqual([[{ key: 1, reorder: false }]]);
  });
  it("changes within the window are merged by key into one publication at its end", () => {
    publishThreadChanges([{ key: 1, reorder: false }]);
    publishThreadChanges([{ key: 2, reorder: false }, { key: 3, reorder: false }]);
    publishThreadChanges([{ key: 2, reorder: true }]);
    expect(received).toHaveLength(1);
    vi.advanceTimersByTime(COALESCE_MS);
    expect(received).toEqual([[{ key: 1, reorder: false }], [{ key: 2, reorder: true }, { key: 3, reorder: false }]]);
  });
  it("a steady stream costs one publication per window, however many batches it holds", () => {
    for (let i = 0; i < 100; i++) {
      publishThreadChanges([{ key: i % 7, reorder: false }]);
      vi.advanceTimersByTime(COALESCE_MS / 10);
    }
    vi.advanceTimersByTime(COALESCE_MS);
    expect(received.length).toBeLessThanOrEqual(12);
    expect(new Set(received.flat().map((c) => c.key))).toEqual(new Set([0, 1, 2, 3, 4, 5, 6]));
  });
  it("after a quiet window the next change goes out at once again", () => {
    publishThreadChanges([{ key: 1, reorder: false }]);
    vi.advanceTimersByTime(COALESCE_MS);
    publishThreadChanges([{ key: 2, reorder: true }]);
    expect(received).toEqual([[{ key: 1, reorder: false }], [{ key: 2, reorder: true }]]);
  });
  it("nothing is published for an empty change list", () => {
    publishThreadChanges([]);
    expect(received).toEqual([]);
  });
  it("directive publications are never held back", () => {
    const sources: string[] = [];
    const off = subscribe("directives", (message) => sources.push(message.sourceId));
    publishThreadChanges([{ key: 1, reorder: false }]);
    publishDirectivesPending("s1");
    publishDirectivesPending("s1");
    off();
    expect(sources).toEqual(["s1", "s1"]);
  });
});
