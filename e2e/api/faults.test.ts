import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAST_STALL_POLICY } from "../support/policies";
import { PATIENCE_MS } from "../support/patience";
import { get, post, startServer, threadDetail, type RunningServer } from "../support/server";

/**
 * kill -9 of the server under concurrent ingestion, then a restart on the same database: every
 * event answered with 200 is stored, and every countdown, deadline and pending directive resumes
 * where it was (an interrupt's acknowledgement grace excepted: it restarts when the interrupt can
 * be delivered again). Short and seeded in `npm test`; `npm run soak` runs the long version
 * through the variables below (see scripts/soak.mjs).
 */
const ROUNDS = positive("RADAR_FAULT_ROUNDS", 1);
const CLIENTS = positive("RADAR_FAULT_CLIENTS", 8);
/** Acknowledged events each round waits for before it kills the server (a milestone, not a time). */
const EVENTS_PER_ROUND = positive("RADAR_FAULT_EVENTS", 300);
const SEED = positive("RADAR_FAULT_SEED", 13);

function positive(name: string, fallback: number): number {
  const value = Number(process.env[name] || fallback);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive whole number`);
  return value;
}

/** mulberry32: the same batches every run for one seed. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Long enough that nothing fires during the test: what is compared is what was scheduled. */
const WAIT_POLICY = { ...FAST_STALL_POLICY, name: "test-fault-wait", graceMs: 600_000 };
const STOP_GRACE_MS = 600_000;

type Event = Record<string, unknown> & { id: string };

let server: RunningServer;

beforeAll(async () => {
  server = await startServer({ RADAR_STOP_GRACE_MS: String(STOP_GRACE_MS) });
});
afterAll(async () => {
  await server?.stop();
});

/** What must survive a kill: the schedule of each thread, not the moment it is read. */
async function schedule(id: string) {
  const { thread, state } = await threadDetail(server, id);
  return {
    status: thread.status,
    nextAttemptAt: thread.retry?.nextAttemptAt ?? null,
    deadlineAt: thread.retry?.deadlineAt ?? null,
    attempt: thread.retry?.attempt ?? null,
    interrupt: state.interrupt ? { origin: state.interrupt.origin, result: state.interrupt.result, requestedAt: state.interrupt.requestedAt } : null,
  };
}

/**
 * One client: posts small batches of new events as fast as the server answers, until told to
 * stop; an event counts as acknowledged only when its batch was answered with 200.
 */
async function client(index: number, round: number, rand: () => number, acknowledged: Event[], stop: { now: boolean }) {
  let n = 0;
  const at = Date.now();
  while (!stop.now) {
    const size = 1 + Math.floor(rand() * 8);
    const thread = `fault-${index}-${Math.floor(rand() * 4)}`;
    const batch: Event[] = [];
    for (let i = 0; i < size; i++, n++) {
      const id = `fault-r${round}-c${index}-${n}`;
      batch.push(
        n % 5 === 0
          ? { id, threadId: thread, type: "turn.started", turnId: `u${round}-${n}`, at: at + n }
          : { id, threadId: thread, type: "progress", turnId: `u${round}-${n - (n % 5)}`, at: at + n },
      );
    }
    try {
      const response = await fetch(`${server.url}/api/v1/events`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
        body: JSON.stringify(batch),
      });
      await response.text();
      if (response.status === 200) acknowledged.push(...batch);
    } catch {
      // The server was killed while this batch was in flight: not acknowledged, may or may not be stored.
      return;
    }
  }
}

/** Re-sends every acknowledged event: each must be recognised as already stored. */
async function expectAllStored(events: Event[]) {
  for (let i = 0; i < events.length; i += 500) {
    const batch = events.slice(i, i + 500);
    const response = await post(server, "/api/v1/events", batch);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect({ accepted: response.body.accepted, duplicates: response.body.duplicates }).toEqual({ accepted: 0, duplicates: batch.length });
  }
}

describe("kill -9 under concurrent ingestion", () => {
  it(`loses no acknowledged event in ${ROUNDS} round(s) of ${CLIENTS} clients, and every schedule resumes`, async () => {
    const now = Date.now();
    // A countdown and its deadline, and an operator's stop whose directive is pending.
    const setup = await post(server, "/api/v1/events", [
      { threadId: "fault-wait", type: "turn.started", turnId: "u1", at: now, policy: WAIT_POLICY },
      { threadId: "fault-wait", type: "retry", turnId: "u1", at: now, attempt: 1, policy: WAIT_POLICY, error: { httpStatus: 429, retryAfter: "240" } },
      { threadId: "fault-stop", type: "turn.started", turnId: "u1", at: now },
      { threadId: "fault-stop", type: "retry", turnId: "u1", at: now, attempt: 1, maxAttempts: 5, error: { httpStatus: 429, retryAfter: "240" } },
    ]);
    expect(setup.status).toBe(200);
    const stop = await server.fetch(`${server.url}/api/v1/threads/fault-stop/stop`, { method: "POST", body: JSON.stringify({ reason: "before the kill" }) });
    expect(stop.status).toBe(202);
    const before = { wait: await schedule("fault-wait"), stop: await schedule("fault-stop") };
    expect(before.wait).toMatchObject({ status: "retrying", attempt: 1 });
    expect(before.wait.nextAttemptAt).not.toBeNull();
    expect(before.wait.deadlineAt).not.toBeNull();
    expect(before.stop).toMatchObject({ status: "stopping", interrupt: { origin: "operator", result: "pending" } });

    const acknowledged: Event[] = [];
    const rand = random(SEED);
    for (let round = 1; round <= ROUNDS; round++) {
      const target = acknowledged.length + EVENTS_PER_ROUND;
      const halt = { now: false };
      const clients = Array.from({ length: CLIENTS }, (_, index) => client(index, round, random(SEED * 1_000 + round * 100 + index), acknowledged, halt));
      // Kill once the milestone is reached, while every client still has a batch in flight.
      const deadline = Date.now() + PATIENCE_MS;
      while (acknowledged.length < target && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5 + rand() * 20));
      expect(acknowledged.length, "acknowledged events before the kill").toBeGreaterThanOrEqual(target);
      await server.kill();
      halt.now = true;
      await Promise.all(clients);
      await server.restart();

      await expectAllStored(acknowledged);
      expect(await schedule("fault-wait")).toEqual(before.wait);
      const stopped = await schedule("fault-stop");
      expect(stopped).toEqual(before.stop);
    }

    // The pending stop is still delivered after the last restart.
    let directive: { kind: string; threadId: string } | undefined;
    for (let poll = 0; poll < 30 && !directive; poll++) {
      const delivered = await get(server, "/api/v1/directives?wait=10");
      expect(delivered.status).toBe(200);
      directive = delivered.body.directives.find((d: { threadId: string }) => d.threadId === "fault-stop");
    }
    expect(directive).toMatchObject({ kind: "interrupt", threadId: "fault-stop" });
    expect(server.output()).not.toMatch(/SQLITE_CORRUPT|malformed/i);
  });
});
