import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { AttemptResult } from "@/lib/alerts/delivery";

/**
 * Alerts on the data path, on a real SQLite file and a clock the test drives: outbox rows commit
 * with the incident that raised them, once per incident and destination, not while it is
 * silenced; a thread's turn into stalled, exhausted or broken raises one alert whichever path
 * caused it (found stalled by the worker, a unit of work, the watchdog's quarantine); the worker retries after Retry-After, gives up after its attempts, and raises and
 * clears a condition once each.
 */
process.env.DATABASE_URL = `file:${path.join(fs.mkdtempSync(path.join(os.tmpdir(), "radar-alerts-")), "radar.db")}`;
process.env.RADAR_ALERT_MAX_ATTEMPTS = "3";
// Short, so that Retry-After, when longer, decides the wait.
process.env.RADAR_ALERT_BACKOFF_MS = "100";

type Modules = {
  alerts: typeof import("./alerts");
  incidents: typeof import("./incidents");
  worker: typeof import("@/lib/server/alert-delivery");
  pipeline: typeof import("@/lib/server/pipeline");
  tokens: typeof import("@/lib/server/tokens");
  ingest: typeof import("@/lib/ingest");
  client: typeof import("./client");
};
let m: Modules;
type Source = Parameters<Modules["pipeline"]["ingestLines"]>[0];
let source: Source;
beforeAll(async () => {
  m = {
    alerts: await import("./alerts"),
    incidents: await import("./incidents"),
    worker: await import("@/lib/server/alert-delivery"),
    pipeline: await import("@/lib/server/pipeline"),
    tokens: await import("@/lib/server/tokens"),
    ingest: await import("@/lib/ingest"),
    client: await import("./client"),
  };
  const { id } = await m.tokens.createSource("fleet", `rr_alerts_${Date.now()}`);
  source = { id, name: "fleet", policy: null, capacityRecovery: false } as Source;
});

const T = Date.parse("2026-12-04T10:00:00Z");

async function send(items: Record<string, unknown>[], receivedAt: number) {
  const lines = m.ingest.withoutIgnored(m.ingest.normalizeBatch("canonical", items, { receivedAt }).lines).lines;
  return m.pipeline.ingestLines(source, lines, receivedAt);
}
const retry = (threadId: string, at: number, model: string) => ({
  threadId, type: "retry", at: new Date(at).toISOString(), turnId: "u1", attempt: 1, maxAttempts: 5, provider: "openai", model,
  error: { httpStatus: 429, message: "Rate limit reached." },
});

async function destinationWith(name: string, events: string[]) {
  const id = await m.alerts.createAlertDestination({ name, url: "https://hooks.example.com/x", format: "json", secret: "whsec_x", createdBy: "test" }, T);
  for (const event of events) await m.alerts.createAlertRule({ destinationId: id, event, threshold: null, createdBy: "test" }, T);
  return id;
}
const rowsOf = async (destinationId: string) => (await m.alerts.alertsOverview(T)).outbox.filter((o) => o.destinationId === destinationId).reverse();

/** A receiver that answers each alert from a script (by its attempt number), and a clock the test moves. */
function harness(answers: AttemptResult[]) {
  let now = T;
  const calls: { id: number; at: number }[] = [];
  const callsOf = (id: number) => calls.filter((c) => c.id === id);
  const deps = {
    now: () => now,
    post: async (_url: string, body: string) => {
      const { id } = JSON.parse(body) as { id: number };
      calls.push({ id, at: now });
      return answers[Math.min(callsOf(id).length - 1, answers.length - 1)];
    },
  };
  return { deps, callsOf, at: (ms: number) => (now = ms) };
}

describe("alerts through the data path", () => {
  it("an incident writes one opened and one closed alert, in the units of work that opened and closed it", async () => {
    const hook = await destinationWith("incidents", ["incident.opened", "incident.closed"]);
    await send([retry("a1", T, "m-a"), retry("a2", T + 1000, "m-a"), retry("a3", T + 2000, "m-a")], T + 2000);
    expect((await rowsOf(hook)).map((o) => [o.event, o.state])).toEqual([["incident.opened", "pending"]]);
    // It grows, and the same notices arrive again: nothing new.
    await send([retry("a4", T + 3000, "m-a"), retry("a1", T, "m-a")], T + 3000);
    expect(await rowsOf(hook)).toHaveLength(1);
    await m.pipeline.closeQuietIncidents(T + 3000 + 5 * 60_000);
    expect((await rowsOf(hook)).map((o) => o.event)).toEqual(["incident.opened", "incident.closed"]);
  });

  it("a silenced incident's alerts are not written", async () => {
    const hook = await destinationWith("silenced", ["incident.closed"]);
    await send([retry("b1", T, "m-b"), retry("b2", T + 1000, "m-b"), retry("b3", T + 2000, "m-b")], T + 2000);
    const [open] = (await m.incidents.listIncidents("open", T + 2000)).incidents.filter((i) => i.model === "m-b");
    expect(await m.alerts.silenceIncident(open.id, 60, T + 2000)).toEqual({ until: T + 2000 + 60 * 60_000 });
    expect((await m.incidents.listIncidents("open", T + 2000)).incidents.find((i) => i.id === open.id)?.silencedUntil).toBe(new Date(T + 2000 + 60 * 60_000).toISOString());
    await m.pipeline.closeQuietIncidents(T + 2000 + 5 * 60_000);
    expect(await rowsOf(hook)).toEqual([]);
  });

  it("a thread's turn into stalled, exhausted or broken raises one alert, found stalled, by a unit of work or by the watchdog's quarantine", async () => {
    const hook = await destinationWith("threads", ["thread.stalled", "thread.exhausted", "thread.broken"]);
    const D = T + 5000;
    await send([retry("x1", D, "m-x"), retry("x2", D, "m-y")], D);
    const key = (externalId: string) => m.client.db().sql.prepare(`SELECT id FROM "Thread" WHERE externalId = ?`).pluck().get(externalId) as number;
    const [healthy, poison] = [key("x1"), key("x2")];
    // The poison thread's stored state no longer parses: every tick of it throws.
    m.client.db().sql.prepare(`UPDATE "Thread" SET state = '{"not": json' WHERE id = ?`).run(poison);
    const later = D + 10 * 60_000;
    // Past their deadlines and not ticked yet: each stall is one alert however often it is seen.
    for (const pass of [0, 1, 2]) await m.worker.judgeConditions(later - 3 + pass);
    for (let pass = 0; pass < m.pipeline.QUARANTINE_AFTER_FAILURES + 2; pass++) await m.pipeline.tickThreads([healthy, poison], later + pass);
    expect(m.client.db().sql.prepare(`SELECT status FROM "Thread" WHERE id IN (?, ?) ORDER BY externalId`).pluck().all(healthy, poison)).toEqual(["exhausted", "broken"]);
    // (The earlier cases' threads, never ticked, are stalled too.)
    const ofThese = (await rowsOf(hook)).filter((o) => /: x[12]$/.test(o.text));
    expect(ofThese.map((o) => [o.event, o.text])).toEqual([
      ["thread.stalled", expect.stringMatching(/: x1$/)],
      ["thread.stalled", expect.stringMatching(/: x2$/)],
      ["thread.exhausted", expect.stringMatching(/: x1$/)],
      ["thread.broken", expect.stringMatching(/: x2$/)],
    ]);
  });

  it("a 503 with Retry-After is tried again no earlier than it says, then delivered once", async () => {
    const h = harness([{ status: 503, retryAfter: "2" }, { status: 200 }]);
    const hook = await destinationWith("busy", []);
    const id = await m.alerts.enqueueTestAlert(hook, { key: "test:busy", event: "test", state: "fired", subject: "busy", text: "t", at: new Date(T).toISOString(), path: null }, T);
    h.at(T);
    await m.worker.alertPass(h.deps);
    let [row] = (await rowsOf(hook)).filter((o) => o.id === id);
    expect(row).toMatchObject({ state: "pending", attempts: 1, lastStatus: 503, nextAttemptAt: new Date(T + 2000).toISOString() });
    h.at(T + 1999);
    await m.worker.alertPass(h.deps);
    expect(h.callsOf(id)).toHaveLength(1);
    h.at(T + 2000);
    await m.worker.alertPass(h.deps);
    h.at(T + 60_000);
    await m.worker.alertPass(h.deps);
    [row] = (await rowsOf(hook)).filter((o) => o.id === id);
    expect(row).toMatchObject({ state: "delivered", attempts: 2, deliveredAt: new Date(T + 2000).toISOString() });
    expect(row.history.map((a) => [a.status, a.result])).toEqual([[503, "pending"], [200, "delivered"]]);
    expect(h.callsOf(id).map((c) => c.at)).toEqual([T, T + 2000]);
  });

  it("gives up after its attempts: never loops forever", async () => {
    const h = harness([{ status: null, error: "connection refused" }]);
    const hook = await destinationWith("down", []);
    const id = await m.alerts.enqueueTestAlert(hook, { key: "test:down", event: "test", state: "fired", subject: "down", text: "t", at: new Date(T).toISOString(), path: null }, T);
    for (let minute = 0; minute < 60; minute++) {
      h.at(T + minute * 60_000);
      await m.worker.alertPass(h.deps);
    }
    const [row] = (await rowsOf(hook)).filter((o) => o.id === id);
    expect(row).toMatchObject({ state: "failed", attempts: 3, lastError: "connection refused" });
    expect(h.callsOf(id)).toHaveLength(3);
  });

  it("raises a silent source once and clears it once it reports again", async () => {
    const hook = await destinationWith("blind", ["source.silent"]);
    const S = T + 24 * 3_600_000;
    await send([{ threadId: "c1", type: "turn.started", turnId: "t1", agent: "codex" }], S);
    await m.worker.judgeConditions(S + 1000);
    await m.worker.judgeConditions(S + 16 * 60_000);
    await m.worker.judgeConditions(S + 17 * 60_000);
    expect((await rowsOf(hook)).map((o) => o.text)).toEqual([expect.stringMatching(/^Source fleet silent for 16 min/)]);
    await send([{ threadId: "c1", type: "turn.completed", turnId: "t1" }], S + 18 * 60_000);
    await m.worker.judgeConditions(S + 18 * 60_000 + 1000);
    await m.worker.judgeConditions(S + 18 * 60_000 + 2000);
    expect((await rowsOf(hook)).map((o) => o.event + " " + o.text.split(":")[0])).toEqual(["source.silent Source fleet silent for 16 min", "source.silent Cleared after 2 min 1 s"]);
  });

  it("retention prunes delivered and failed alerts with their attempts, never pending ones", async () => {
    const hook = await destinationWith("retained", []);
    const pending = await m.alerts.enqueueTestAlert(hook, { key: "test:retained", event: "test", state: "fired", subject: "r", text: "t", at: new Date(T).toISOString(), path: null }, T - 1);
    const before = (await m.alerts.alertsOverview(T)).outbox.filter((o) => o.state !== "pending").length;
    expect(before).toBeGreaterThan(0);
    expect(await m.alerts.pruneAlerts(T + 365 * 24 * 3_600_000, 1_000)).toBe(before);
    const left = (await m.alerts.alertsOverview(T)).outbox;
    expect(left.every((o) => o.state === "pending")).toBe(true);
    expect(left.map((o) => o.id)).toContain(pending);
  });
});
