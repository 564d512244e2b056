/**
 * The demo simulator against the built app: within seconds the board shows a living fleet in
 * several statuses, and Stop retrying reaches a simulated agent, which ends its turn and
 * acknowledges (the thread turns `stopped`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runDemo } from "../../scripts/demo/simulator";
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
    const demo = runDemo({ server: server.url, token: server.token, seed: 7, speed: 4, durationMs: 12_000, pollWaitSeconds: 5, log: (m) => logs.push(m) });

    // A thread in a long wait: stop it through the API twin of the button.
    const target = await waitFor(async () => {
      const soon = Date.now() + 15_000;
      return (await board()).find((t) => t.status === "retrying" && t.retry?.nextAttemptAt && Date.parse(t.retry.nextAttemptAt) > soon);
    }, 8_000);
    const stop = await post(server, `/api/v1/threads/${target.id}/stop`, { reason: "demo test" });
    expect(stop.status).toBe(202);
    // The simulated agent reports turn.interrupted, then acknowledges: wait for both.
    const stopped = await waitFor(async () => {
      const v = await threadDetail(server, target.id);
      const acked = v?.directives.some((d) => d.kind === "interrupt" && d.state === "acknowledged");
      return v?.thread.status === "stopped" && acked ? v : null;
    }, 8_000);
    expect(stopped.events.some((e) => e.type === "turn.interrupted")).toBe(true);
    expect(stopped.directives.find((d) => d.kind === "interrupt")).toMatchObject({ state: "acknowledged", result: "acknowledged" });

    const summary = await demo;
    expect(summary.interrupted).toBeGreaterThanOrEqual(1);
    expect(logs.filter((l) => /rejected|refused/.test(l))).toEqual([]);

    const threads = await board();
    const statuses = new Set(threads.map((t) => t.status));
    expect(threads.length).toBeGreaterThanOrEqual(15);
    expect(statuses.size, [...statuses].join(", ")).toBeGreaterThanOrEqual(5);
    for (const s of ["retrying", "waiting_reset", "completed", "failed", "stopped"]) expect(statuses, [...statuses].join(", ")).toContain(s);
    expect(new Set(threads.map((t) => t.agent)).size).toBeGreaterThanOrEqual(2);
    expect(new Set(threads.map((t) => t.provider)).size).toBeGreaterThanOrEqual(3);
    expect(threads.some((t) => t.parentThreadId)).toBe(true);
  }, 20_000);
});
