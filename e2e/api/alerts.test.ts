import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyAlertSignature } from "@/lib/alerts/signature";
import type { AlertsOverview } from "@/lib/wire/types";
import { PATIENCE_MS, TEST_TIMEOUT_MS } from "../support/patience";
import { waitFor } from "../support/relay-helpers";
import { get, post, startServer, type RunningServer } from "../support/server";

/**
 * Alerts against the built app, delivered to receivers this test starts on 127.0.0.1 (listed by
 * name in RADAR_WEBHOOK_ALLOW; `*` lets any public host through but never a private address).
 * Time is never slept on: each step waits for what a receiver got or what the outbox stored.
 */
interface Received {
  at: number;
  body: string;
  json: { id: number; event: string; state: string; subject: string; text: string };
  timestamp: string | undefined;
  signature: string | undefined;
}

interface Receiver {
  url: string;
  got: Received[];
  close: () => Promise<void>;
}

/** A webhook receiver; `answer` decides each response from the requests so far. */
async function receiver(answer: (n: number) => { status: number; headers?: Record<string, string> } = () => ({ status: 200 })): Promise<Receiver> {
  const got: Received[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      got.push({ at: Date.now(), body, json: JSON.parse(body), timestamp: request.headers[TIMESTAMP_HEADER] as string, signature: request.headers[SIGNATURE_HEADER] as string });
      const { status, headers } = answer(got.length);
      response.writeHead(status, headers).end(status === 200 ? "ok" : "later");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

let server: RunningServer;
const receivers: Receiver[] = [];
beforeAll(async () => {
  server = await startServer({
    RADAR_WEBHOOK_ALLOW: "127.0.0.1,*",
    // Retry-After, not the backoff, decides the wait in the 503 case.
    RADAR_ALERT_BACKOFF_MS: "100",
    RADAR_ALERT_SILENCE_MS: "1500",
    RADAR_ALERT_POLL_GAP_MS: "1500",
  });
}, TEST_TIMEOUT_MS);
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await server?.stop();
});

async function destination(name: string, url: string, format = "json") {
  return post(server, "/api/v1/alerts/destinations", { name, url, format });
}

async function receiverWithRules(name: string, events: string[], answer?: Parameters<typeof receiver>[0]) {
  const r = await receiver(answer);
  receivers.push(r);
  const created = await destination(name, r.url);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  for (const event of events) expect((await post(server, "/api/v1/alerts/rules", { destinationId: created.body.id, event })).status).toBe(201);
  return { ...r, id: created.body.id as string, secret: created.body.secret as string };
}

const overview = async () => (await get(server, "/api/v1/alerts")).body as AlertsOverview;
const verified = (secret: string, r: Received) => verifyAlertSignature({ secret, body: r.body, timestamp: r.timestamp, signature: r.signature, nowMs: Date.now() });

const QUIET_MS = 5 * 60_000;
const BURST_AT = Date.now() - 3 * 60_000;
const retry = (threadId: string, at: number, model: string) => ({
  threadId, type: "retry", at, turnId: "u1", attempt: 1, maxAttempts: 5, provider: "openai", model,
  error: { httpStatus: 429, message: "Rate limit reached." },
});

describe("alerts", () => {
  it("are an admin's to manage", async () => {
    expect((await get(server, "/api/v1/alerts", null)).status).toBe(401);
    expect((await post(server, "/api/v1/alerts/rules", { destinationId: "dst-nope", event: "incident.opened" })).status).toBe(404);
    expect((await post(server, "/api/v1/alerts/rules", { destinationId: "dst-nope", event: "sideways" })).status).toBe(400);
  });

  it("refuses a destination on a loopback or private address that is not listed by name", async () => {
    for (const url of ["http://localhost:9/hook", "http://10.1.2.3/hook", "http://[::1]:9/hook", "http://[::ffff:127.0.0.1]:9/hook", "http://169.254.169.254/latest"]) {
      const refused = await destination("internal", url);
      expect(refused.status, url).toBe(422);
      expect(refused.body.detail, url).toMatch(/loopback or private address/);
    }
    expect((await overview()).destinations.map((d) => d.name)).not.toContain("internal");
  });

  it(
    "sends exactly one signed opened and one closed per incident",
    async () => {
      const hook = await receiverWithRules("incidents", ["incident.opened", "incident.closed"]);
      const burst = ["alert-1", "alert-2", "alert-3"].map((id, i) => retry(id, BURST_AT + i * 1000, "e2e-alert-wall"));
      expect((await post(server, "/api/v1/events", burst)).body).toMatchObject({ accepted: 3 });
      // It grows: no second "opened".
      expect((await post(server, "/api/v1/events", [retry("alert-4", BURST_AT + 3000, "e2e-alert-wall")])).body).toMatchObject({ accepted: 1 });
      const opened = await waitFor(() => hook.got.find((r) => r.json.event === "incident.opened"), PATIENCE_MS, () => JSON.stringify(hook.got));
      // A notice elsewhere, dated after the quiet period, closes it.
      expect((await post(server, "/api/v1/events", [retry("alert-elsewhere", BURST_AT + 3000 + QUIET_MS, "e2e-alert-other")])).body).toMatchObject({ accepted: 1 });
      await waitFor(() => hook.got.find((r) => r.json.event === "incident.closed"), PATIENCE_MS, () => JSON.stringify(hook.got));
      // Every alert of this destination delivered, none left to send: the receiver has all there will be.
      await waitFor(async () => (await overview()).outbox.filter((o) => o.destinationId === hook.id).every((o) => o.state === "delivered"), PATIENCE_MS);
      expect(hook.got.map((r) => [r.json.event, r.json.subject])).toEqual([
        ["incident.opened", opened.json.subject],
        ["incident.closed", opened.json.subject],
      ]);
      for (const r of hook.got) expect(verified(hook.secret, r), r.body).toBe(true);
      expect(verified("whsec_wrong", hook.got[0])).toBe(false);
      expect(opened.json.text).toContain("openai · e2e-alert-wall");
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "honours a 503's Retry-After: the next attempt is stored no earlier than 2 s later, and it arrives once",
    async () => {
      const hook = await receiverWithRules("busy", [], (n) => (n === 1 ? { status: 503, headers: { "retry-after": "2" } } : { status: 200 }));
      const sent = await post(server, `/api/v1/alerts/destinations/${hook.id}/test`, {});
      expect(sent.status).toBe(202);
      const id = sent.body.outboxId as number;
      const row = await waitFor(async () => (await overview()).outbox.find((o) => o.id === id && o.state === "delivered"), PATIENCE_MS, async () => JSON.stringify((await overview()).outbox.find((o) => o.id === id)));
      expect(row.history.map((a) => a.status)).toEqual([503, 200]);
      const firstAt = Date.parse(row.history[0].at);
      expect(Date.parse(row.nextAttemptAt)).toBeGreaterThanOrEqual(firstAt + 2000);
      expect(Date.parse(row.history[1].at)).toBeGreaterThanOrEqual(Date.parse(row.nextAttemptAt));
      expect(hook.got.map((r) => r.json.id)).toEqual([id, id]);
      expect(hook.got[1].at - hook.got[0].at).toBeGreaterThanOrEqual(2000 - 50);
      for (const r of hook.got) expect(verified(hook.secret, r)).toBe(true);
      // Audited, each attempt.
      const audit = await server.fetch(`${server.url}/api/v1/exports/audit?action=alert.deliver`);
      const text = await audit.text();
      expect(text).toContain(`#${id}`);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "raises one alert when a source goes silent and when its relay stops polling, and clears each when they come back",
    async () => {
      const hook = await receiverWithRules("blind", ["source.silent", "relay.silent"]);
      const of = (event: string) => hook.got.filter((r) => r.json.event === event).map((r) => r.json.state);
      const poll = async () => expect((await server.fetch(`${server.url}/api/v1/directives?wait=0`, { headers: { authorization: `Bearer ${server.token}` } })).status).toBe(200);
      await poll();
      expect((await post(server, "/api/v1/events", [{ threadId: "blind-1", type: "turn.started", turnId: "t1", agent: "codex" }])).status).toBe(200);
      await waitFor(() => of("source.silent").length >= 1 && of("relay.silent").length >= 1, PATIENCE_MS, () => JSON.stringify(hook.got.map((r) => r.json)));
      expect(of("source.silent")[0]).toBe("raised");
      expect(of("relay.silent")[0]).toBe("raised");
      // Both come back.
      await poll();
      expect((await post(server, "/api/v1/events", [{ threadId: "blind-1", type: "turn.completed", turnId: "t1" }])).status).toBe(200);
      await waitFor(() => of("source.silent").includes("cleared") && of("relay.silent").includes("cleared"), PATIENCE_MS, () => JSON.stringify(hook.got.map((r) => r.json)));
      // One alert per silence: raised once, then cleared (a later silence raises anew).
      expect(of("source.silent").slice(0, 2)).toEqual(["raised", "cleared"]);
      expect(of("relay.silent").slice(0, 2)).toEqual(["raised", "cleared"]);
    },
    TEST_TIMEOUT_MS,
  );

  // Last: it restarts the server the other cases share.
  it(
    "survives a restart: a delivery pending when the server stops is delivered exactly once after it starts again on the same database",
    async () => {
      let restarted = false;
      let accepted = 0;
      // Busy until the server has been restarted, then accepting: only the new process can deliver it.
      const hook = await receiverWithRules("restart", [], () => {
        if (!restarted) return { status: 503, headers: { "retry-after": "2" } };
        accepted++;
        return { status: 200 };
      });
      const sent = await post(server, `/api/v1/alerts/destinations/${hook.id}/test`, {});
      expect(sent.status).toBe(202);
      const id = sent.body.outboxId as number;
      const outboxRow = async () => (await overview()).outbox.find((o) => o.id === id);
      // The refusal is stored: the delivery is pending with its next attempt, in the database.
      await waitFor(async () => (await outboxRow())?.attempts, PATIENCE_MS, async () => JSON.stringify(await outboxRow()));
      await server.stop();
      restarted = true;
      await server.restart();
      const row = await waitFor(async () => { const r = await outboxRow(); return r?.state === "delivered" ? r : undefined; }, PATIENCE_MS, async () => JSON.stringify(await outboxRow()));
      const statuses = row.history.map((a) => a.status);
      expect(statuses.at(-1)).toBe(200);
      expect(statuses.slice(0, -1).every((status) => status === 503)).toBe(true);
      // The stored next attempt held across the restart.
      expect(Date.parse(row.history.at(-1)!.at)).toBeGreaterThanOrEqual(Date.parse(row.history.at(-2)!.at) + 2000);
      // Exactly once: one accepted request, every request this one alert.
      expect(accepted).toBe(1);
      expect(new Set(hook.got.map((r) => r.json.id))).toEqual(new Set([id]));
      for (const r of hook.got) expect(verified(hook.secret, r)).toBe(true);
    },
    TEST_TIMEOUT_MS,
  );
});
