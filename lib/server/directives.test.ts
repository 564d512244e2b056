import { afterEach, describe, expect, it, vi } from "vitest";
import { shared } from "@/lib/process-state";
import type { DirectiveView } from "@/lib/wire/types";
import { publishDirectivesPending } from "./bus";

const { takePendingDirectives } = vi.hoisted(() => ({ takePendingDirectives: vi.fn<(sourceId: string) => Promise<DirectiveView[]>>() }));
vi.mock("@/lib/db/directives", () => ({ takePendingDirectives }));
vi.mock("./pipeline", () => ({ withInternalEvents: vi.fn() }));

const { admitLongPoll, LONG_POLLS_PER_TOKEN, waitForDirectives } = await import("./directives");
const { subscribe } = await import("./bus");

const directive = { id: "d1" } as unknown as DirectiveView;

/** Who listens on the bus for wake-ups (its one emitter is process-wide: lib/process-state.ts). */
function listeners(): number {
  subscribe("resync", () => undefined)();
  const { emitter } = shared<{ bus?: { emitter: import("node:events").EventEmitter } }>("bus", () => ({})).bus!;
  return emitter.listenerCount("directives") + emitter.listenerCount("resync");
}

/** A relay's directive long-poll: a wake-up is never lost, and nothing stays subscribed. */
describe("waitForDirectives", () => {
  afterEach(() => takePendingDirectives.mockReset());

  it("a wake-up published while the first look runs ends the wait at once", async () => {
    takePendingDirectives.mockImplementationOnce(async (sourceId) => {
      // A Stop pressed (here or on another instance) between the look and the wait.
      publishDirectivesPending(sourceId);
      return [];
    });
    takePendingDirectives.mockResolvedValueOnce([directive]);
    const started = Date.now();
    const found = await waitForDirectives("source-a", 60_000);
    expect(found).toEqual([directive]);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(takePendingDirectives).toHaveBeenCalledTimes(2);
  });

  it("leaves no subscription behind, whether it found directives, timed out or was aborted", async () => {
    const before = listeners();
    takePendingDirectives.mockResolvedValueOnce([directive]);
    await waitForDirectives("source-b", 60_000);
    takePendingDirectives.mockResolvedValue([]);
    await waitForDirectives("source-b", 1);
    const aborted = new AbortController();
    const waiting = waitForDirectives("source-b", 60_000, aborted.signal);
    aborted.abort();
    expect(await waiting).toEqual([]);
    takePendingDirectives.mockRejectedValueOnce(new Error("the store failed"));
    await expect(waitForDirectives("source-b", 60_000)).rejects.toThrow("the store failed");
    expect(listeners()).toBe(before);
  });
});

/** A token holds at most LONG_POLLS_PER_TOKEN long-polls; the route answers the next one 429. */
describe("admitLongPoll", () => {
  it("admits LONG_POLLS_PER_TOKEN per token, refuses the next, and admits again once one ends", () => {
    const mine = Array.from({ length: LONG_POLLS_PER_TOKEN }, () => admitLongPoll("hash-a"));
    expect(mine.every((release) => release !== null)).toBe(true);
    expect(admitLongPoll("hash-a")).toBeNull();
    // Another token is not affected.
    const other = admitLongPoll("hash-b");
    expect(other).not.toBeNull();
    mine[0]!();
    // Releasing twice frees one slot only.
    mine[0]!();
    const again = admitLongPoll("hash-a");
    expect(again).not.toBeNull();
    expect(admitLongPoll("hash-a")).toBeNull();
    for (const release of [...mine.slice(1), again, other]) release!();
  });
});
