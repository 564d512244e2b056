import { beforeAll, describe, expect, it } from "vitest";
import { countUnitsOfWork, normalizedLines, useFreshDatabase } from "@/e2e/support/in-process";

/**
 * The watchdog's pass over many due threads never holds the thread that ingests in one stretch:
 * TICK_CHUNK threads per unit of work, the event loop free in between.
 */
useFreshDatabase("watchdog-chunks");

let m: {
  watchdog: typeof import("./watchdog");
  pipeline: typeof import("./pipeline");
  tokens: typeof import("./tokens");
  client: typeof import("@/lib/db/client");
  threadState: typeof import("@/lib/db/thread-state");
};
beforeAll(async () => {
  m = {
    watchdog: await import("./watchdog"),
    pipeline: await import("./pipeline"),
    tokens: await import("./tokens"),
    client: await import("@/lib/db/client"),
    threadState: await import("@/lib/db/thread-state"),
  };
});

describe("a watchdog pass over many due threads", () => {
  it("ticks them TICK_CHUNK per unit of work, and each one's deadline is applied", async () => {
    const source = await m.tokens.createSource("chunks", "rr_chunks_0123456789abcdef");
    // An hour ago: every Retry-After has ended by now, when the watchdog's first pass runs.
    const t0 = Date.now() - 3_600_000;
    const threads = 2 * m.watchdog.TICK_CHUNK + 5;
    for (let i = 0; i < threads; i++) {
      const retry = { type: "retry", at: t0 + 1, attempt: 1, maxAttempts: 5, error: { httpStatus: 429, message: "Please try again in 2s." } };
      await m.pipeline.ingestLines(source, normalizedLines([{ type: "turn.started", at: t0 }, retry as never], { receivedAt: t0, base: { threadId: `due-${i}`, turnId: "turn-1" } }), t0);
    }
    expect(await m.threadState.dueThreadIds(Date.now(), 200)).toHaveLength(threads);
    // Resolves once its first pass is done (it found fewer due threads than a pass takes).
    const { units } = await countUnitsOfWork(m.client.db().sql, () => m.watchdog.startWatchdog());
    // One per chunk, and the pass's other work (its incidents).
    expect(units).toBeGreaterThanOrEqual(Math.ceil(threads / m.watchdog.TICK_CHUNK));
    expect(await m.threadState.dueThreadIds(Date.now(), 200)).toEqual([]);
  });
});
