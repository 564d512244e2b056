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
      // A thread in a long wait: stop it through the API twin of the button. The board is the
      // radar's picture of the fleet, which may lag the simulated agents on a busy machine: an
      // agent whose turn already ended acknowledges with "the turn had already ended" and ends
      // nothing. Then the test stops another one; at least one stop must reach an agent still
      // waiting, which ends its turn (turn.interrupted) and acknowledges.
      const tried = new Set<string>();
      let stopped: Awaited<ReturnType<typeof threadDetail>> = null;
      while (!stopped) {
        expect(tried.size, `every stopped thread's turn had already ended: ${[...tried].join(", ")}`).toBeLessThan(5);
        const target = await waitFor(async () => {
          const later = Date.now() + 60_000;
          return (await board()).find((t) => !tried.has(t.id) && t.status === "retrying" && t.retry?.nextAttemptAt && Date.parse(t.retry.nextAttemptAt) > later);
        }, PATIENCE_MS);
        tried.add(target.id);
        const stop = await post(server, `/api/v1/threads/${target.id}/stop`, { reason: "demo test" });
        expect(stop.status).toBe(202);
        // The simulated agent acknowledges: wait for that, then for what it says it did.
        const acked = await waitFor(async () => {
          const v = await threadDetail(server, target.id);
          return v?.directives.find((d) => d.kind === "interrupt" && d.state === "acknowledged") ? v : null;
        }, PATIENCE_MS);
        const directive = acked.directives.find((d) => d.kind === "interrupt")!;
        expect(directive).toMatchObject({ state: "acknowledged", result: "acknowledged" });
        if (/had already ended/.test(directive.detail ?? "")) continue;
        expect(directive.detail).toMatch(/^demo agent .* ended turn /);
        // It reported turn.interrupted before acknowledging; the thread is stopped.
        stopped = await waitFor(async () => {
          const v = await threadDetail(server, target.id);
          return v?.thread.status === "stopped" && v.events.some((e) => e.type === "turn.interrupted") ? v : null;
        }, PATIENCE_MS);
      }
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
