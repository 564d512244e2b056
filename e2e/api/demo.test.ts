/**
 * The demo simulator against the built app: within seconds the board shows a living fleet in
 * several statuses, and Stop retrying reaches a simulated agent, which ends its turn and
 * acknowledges (the thread turns `stopped`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDemo } from "../../scripts/demo/simulator";
import { PATIENCE_MS } from "../support/patience";
import { waitFor } from "../support/relay-helpers";
import { threadDetail } from "../support/relay-radar";
import { get, post, startServer, type RunningServer } from "../support/server";

let server: RunningServer;

beforeAll(async () => {
  server = await startServer({ RADAR_POLICY_GRACE_MS: "2000" });
});

afterAll(async () => {
  await server?.stop();
});

interface BoardThread {
  id: string;
  status: string;
  agent: string | null;
  provider: string | null;
  model: string | null;
  parentThreadId: string | null;
  retry: { nextAttemptAt: string | null } | null;
}

async function board(): Promise<BoardThread[]> {
  const r = await get(server, "/api/v1/threads?pageSize=200");
  return r.body.threads as BoardThread[];
}

describe("demo simulator", () => {
  it("fills the board with a varied fleet in several statuses and honours Stop retrying", async () => {
    const logs: string[] = [];
    // The demo runs until the test has seen what it waits for (then it is ended), not for a fixed
    // time: on a busy machine the fleet takes longer to develop, and the simulated agent must
    // still be running when the stop reaches it.
    const end = new AbortController();
    const demo = runDemo({ server: server.url, token: server.token, seed: 7, speed: 4, signal: end.signal, pollWaitSeconds: 5, log: (m) => logs.push(m) });
    try {
      // A thread in a long wait: stop it through the API twin of the button.
      const target = await waitFor(async () => {
        const soon = Date.now() + 15_000;
        return (await board()).find((t) => t.status === "retrying" && t.retry?.nextAttemptAt && Date.parse(t.retry.nextAttemptAt) > soon);
      }, PATIENCE_MS);
      const stop = await post(server, `/api/v1/threads/${target.id}/stop`, { reason: "demo test" });
      expect(stop.status).toBe(202);
      // The simulated agent reports turn.interrupted, then acknowledges: wait for both.
      const stopped = await waitFor(async () => {
        const v = await threadDetail(server, target.id);
        const acked = v?.directives.some((d) => d.kind === "interrupt" && d.state === "acknowledged");
        return v?.thread.status === "stopped" && acked ? v : null;
      }, PATIENCE_MS);
      expect(stopped.events.some((e) => e.type === "turn.interrupted")).toBe(true);
      expect(stopped.directives.find((d) => d.kind === "interrupt")).toMatchObject({ state: "acknowledged", result: "acknowledged" });

      // The fleet: one snapshot of the board with every status below at once (statuses such as
      // retrying come and go, so the test waits for a snapshot that has them all).
      const wanted = ["retrying", "waiting_reset", "completed", "failed", "stopped"];
      let last: BoardThread[] = [];
      const threads = await waitFor(
        async () => {
          last = await board();
          const statuses = new Set(last.map((t) => t.status));
          return last.length >= 15 && wanted.every((s) => statuses.has(s)) ? last : null;
        },
        PATIENCE_MS,
        () => `last board: ${last.length} threads, statuses ${[...new Set(last.map((t) => t.status))].join(", ")}`,
      );
      const statuses = new Set(threads.map((t) => t.status));
      expect(threads.length).toBeGreaterThanOrEqual(15);
      expect(statuses.size, [...statuses].join(", ")).toBeGreaterThanOrEqual(5);
      for (const s of wanted) expect(statuses, [...statuses].join(", ")).toContain(s);
      expect(new Set(threads.map((t) => t.agent)).size).toBeGreaterThanOrEqual(2);
      expect(new Set(threads.map((t) => t.provider)).size).toBeGreaterThanOrEqual(3);
      expect(threads.some((t) => t.parentThreadId)).toBe(true);
    } finally {
      end.abort();
    }

    const summary = await demo;
    expect(summary.interrupted).toBeGreaterThanOrEqual(1);
    expect(logs.filter((l) => /rejected|refused/.test(l))).toEqual([]);
  });
});
