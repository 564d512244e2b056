import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAST_STALL_POLICY } from "../support/policies";
import { get, post, startServer, type RunningServer } from "../support/server";

/**
 * Downtime against the built app: deadlines and stop graces that run out while the server is
 * down. Timers fire at their own time, but nothing the server asks of a source can be heard
 * before it is back, so every acknowledgement grace runs from the restart. The stop grace is
 * long (STOP_GRACE_MS) so a busy machine has all the time it needs to reconnect and acknowledge;
 * the downtime is longer than that grace, so the old rule (grace from the historical time)
 * would break both threads on the first tick.
 */
// 15 s was not enough on a busy CI machine: the restart, the first reads and the relay's poll
// took longer than that before the acknowledgement could arrive.
const STOP_GRACE_MS = 30_000;
const DOWNTIME_MS = STOP_GRACE_MS + 2_000;
/** Deadline = notice + 3.5 s: usually while the server is down (a slow stop may still outlast it; see below). */
const STALL_POLICY = { ...FAST_STALL_POLICY, graceMs: 3_000 };
/** Downtime, two starts of the built app and the grace, with room for a machine under load. */
const TEST_TIMEOUT_MS = 240_000;

let server: RunningServer;

beforeAll(async () => {
  server = await startServer({ RADAR_STOP_GRACE_MS: String(STOP_GRACE_MS), RADAR_REDELIVER_MS: "1000" });
});
afterAll(async () => {
  await server?.stop();
});

async function detail(id: string) {
  const response = await get(server, `/api/v1/threads/${encodeURIComponent(id)}`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

/** Long-polls the way the relay does until every wanted thread's directive has arrived. */
async function receiveDirectives(threadIds: string[]) {
  const found = new Map<string, { id: string; kind: string; threadId: string }>();
  // Bounded by the number of polls, not by the clock: each poll waits up to 10 s server-side.
  for (let poll = 0; poll < 30 && found.size < threadIds.length; poll++) {
    const delivered = await get(server, "/api/v1/directives?wait=10");
    expect(delivered.status).toBe(200);
    for (const directive of delivered.body.directives) if (threadIds.includes(directive.threadId)) found.set(directive.threadId, directive);
  }
  expect([...found.keys()].sort()).toEqual([...threadIds].sort());
  return found;
}

describe("a restart: graces run from when the server can be heard again", () => {
  // One downtime serves both tests (it is most of this file's time): three threads set up before
  // the server goes down. The relay of the first test receives r-silent's directive with the others
  // but never acknowledges it, which is all the second test needs ("nobody acknowledges").
  let now: number;
  let stopRequestedAt: number;
  let downAt: number;
  let restartedAt: number;
  /** r-silent as read at once after the restart (as the first test reads the others): its grace runs from there. */
  let silentAfterRestart: Awaited<ReturnType<typeof detail>>;

  beforeAll(async () => {
    now = Date.now();
    const posted = await post(server, "/api/v1/events", [
      // Stalls while the server is down: exhausted at its deadline, the policy's interrupt pending.
      { threadId: "r-stall", type: "turn.started", turnId: "u1", at: now, policy: STALL_POLICY },
      { threadId: "r-stall", type: "retry", turnId: "u1", at: now, attempt: 1, policy: STALL_POLICY, error: { httpStatus: 429 } },
      // Stopped by an operator just before the server goes down; the grace runs out while it is down.
      { threadId: "r-stop", type: "turn.started", turnId: "u1", at: now },
      { threadId: "r-stop", type: "retry", turnId: "u1", at: now, attempt: 1, maxAttempts: 5, error: { httpStatus: 429, retryAfter: "240" } },
      // Stopped too, and never acknowledged.
      { threadId: "r-silent", type: "turn.started", turnId: "u1", at: now },
      { threadId: "r-silent", type: "retry", turnId: "u1", at: now, attempt: 1, maxAttempts: 5, error: { httpStatus: 429, retryAfter: "240" } },
    ]);
    expect(posted.status).toBe(200);
    const stop = await server.fetch(`${server.url}/api/v1/threads/r-stop/stop`, { method: "POST", body: JSON.stringify({ reason: "before the restart" }) });
    expect(stop.status).toBe(202);
    expect((await server.fetch(`${server.url}/api/v1/threads/r-silent/stop`, { method: "POST" })).status).toBe(202);
    stopRequestedAt = (await detail("r-stop")).state.interrupt.requestedAt as number;

    await server.stop();
    downAt = Date.now();
    // Real downtime is the point of this file: longer than the grace, so only the new rule keeps the threads.
    await new Promise((resolve) => setTimeout(resolve, DOWNTIME_MS));
    await server.restart();
    restartedAt = Date.now();
    silentAfterRestart = await detail("r-silent");
  }, TEST_TIMEOUT_MS);

  it("a relay that reconnects after the restart and acknowledges leaves the threads stopped or exhausted, never broken", async () => {
    expect(restartedAt - stopRequestedAt).toBeGreaterThan(STOP_GRACE_MS);

    const stall = await detail("r-stall");
    expect(stall.thread.status).toBe("exhausted");
    expect(stall.episodes.at(-1)).toMatchObject({ outcome: "exhausted", outcomeCode: "rateLimitRetryExhausted" });
    expect(stall.state.interrupt).toMatchObject({ origin: "policy", result: "pending" });
    // However the deadline fell, the acknowledgement grace runs from the restart.
    expect(stall.state.interrupt.graceEndsAt).toBeGreaterThanOrEqual(downAt + DOWNTIME_MS + STOP_GRACE_MS);
    const endedAt = new Date(stall.episodes.at(-1).endedAt).getTime();
    if (endedAt >= downAt) {
      // The usual case: the deadline passed while the server was down. The episode ends at that
      // true deadline, while its interrupt was requested after the restart.
      expect(endedAt).toBeLessThan(downAt + DOWNTIME_MS);
      expect(stall.state.interrupt.requestedAt).toBeGreaterThanOrEqual(downAt + DOWNTIME_MS);
    }
    expect((await detail("r-stop")).thread.status).toBe("stopping");

    const directives = await receiveDirectives(["r-stall", "r-stop"]);
    for (const directive of directives.values()) {
      expect(directive.kind).toBe("interrupt");
      const ack = await post(server, `/api/v1/directives/${directive.id}/ack`, { result: "acknowledged", detail: "turn interrupted" });
      expect(ack.status).toBe(200);
    }

    const stopped = await detail("r-stop");
    expect(stopped.thread.status).toBe("stopped");
    expect(stopped.state.interrupt).toMatchObject({ result: "acknowledged" });
    // A policy interrupt, once acknowledged, leaves the episode's own outcome on the thread.
    const exhausted = await detail("r-stall");
    expect(exhausted.thread.status).toBe("exhausted");
    expect(exhausted.state.interrupt).toMatchObject({ result: "acknowledged" });
    // Nothing is left for the watchdog: neither can turn broken later.
    expect(stopped.state.wakeAt).toBeNull();
    expect(exhausted.state.wakeAt).toBeNull();
  }, TEST_TIMEOUT_MS);

  it("a stop nobody acknowledges after the restart still ends broken, a full grace after the restart", async () => {
    const resumed = silentAfterRestart;
    expect(resumed.thread.status).toBe("stopping");
    const graceEndsAt = resumed.state.interrupt.graceEndsAt as number;
    expect(graceEndsAt).toBeGreaterThan(now + DOWNTIME_MS);
    expect(graceEndsAt).toBeGreaterThanOrEqual(downAt + DOWNTIME_MS + STOP_GRACE_MS);
    // Wait on the milestone itself: the watchdog marks it broken once that grace has passed.
    for (let poll = 0; poll < 400; poll++) {
      const d = await detail("r-silent");
      if (d.thread.status === "broken") break;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const broken = await detail("r-silent");
    expect(broken.thread.status).toBe("broken");
    expect(broken.state.interrupt).toMatchObject({ result: "unconfirmed", graceEndsAt });
  }, TEST_TIMEOUT_MS);
});
