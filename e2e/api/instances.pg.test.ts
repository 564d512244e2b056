import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { PATIENCE_MS } from "../support/patience";
import { FAST_STALL_POLICY } from "../support/policies";
import { freshDatabase } from "../../scripts/lib/postgres";
import { startRoundRobinProxy, type RoundRobinProxy } from "../support/round-robin-proxy";
import { queryDatabase, startServer, type RunningServer } from "../support/server";
import { waitFor } from "../support/relay-helpers";

/**
 * Several instances of the built app on ONE PostgreSQL database, behind a round-robin proxy
 * (e2e/support/round-robin-proxy.ts), as a team would run them behind a load balancer:
 * - a live stream on one instance hears what another ingested (LISTEN/NOTIFY, lib/server/instances.ts);
 * - directives are delivered once per acknowledgement whichever instance a relay reaches, and a
 *   Stop pressed on one instance wakes a relay long-polling on another at once;
 * - concurrent ingestion to every instance stores every event once, and resends store nothing;
 * - kill -9 of the watchdog's leader during a countdown: another instance takes over and ends the
 *   thread within a few seconds of its deadline, with one exhausted episode and one interrupt.
 * Which instance leads is in its log: "[radar] watchdog: this instance (pid …) leads".
 */
const INSTANCES = 3;
const TOKEN = `rr_inst_${Math.random().toString(36).slice(2)}`;
// Long enough for the early look below to be judged on a busy machine, short enough for the suite.
const REDELIVER_MS = 3_000;
/** What "within a few seconds of its deadline" means: a lease of about a second, a watchdog sleep of at most one. */
const TAKEOVER_MS = 5_000;

let servers: RunningServer[] = [];
let proxy: RoundRobinProxy;
let databaseUrl: string;

beforeAll(async () => {
  databaseUrl = await freshDatabase(inject("postgresUrl"), "instances");
  // A long stop grace: a thread stays as the deadline left it while the test looks.
  const env = { RADAR_INGEST_TOKEN: TOKEN, RADAR_REDELIVER_MS: String(REDELIVER_MS), RADAR_STOP_GRACE_MS: "600000" };
  // Started together: they migrate the one database under migratePostgres's lock.
  servers = await Promise.all(Array.from({ length: INSTANCES }, () => startServer(env, { databaseUrl })));
  proxy = await startRoundRobinProxy(servers.map((server) => server.url));
});

afterAll(async () => {
  await proxy?.close();
  await Promise.all(servers.map((server) => server.stop()));
});

const apiKey = () => servers[0].apiKey;

// Leadership may have changed hands before (a lease check slower than its second on a busy
// machine): the leader is the one whose last word on it is "leads".
const leads = (server: RunningServer) => server.output().match(/watchdog: this instance \(pid \d+\) (leads|stepped down)/g)?.at(-1)?.endsWith("leads") ?? false;

/** This instance's radar_watchdog_leader gauge on /api/metrics (1 when it runs the watchdog). */
async function leaderGauge(server: RunningServer): Promise<number> {
  const text = await (await server.fetch("/api/metrics")).text();
  return Number(/^radar_watchdog_leader (\d+)$/m.exec(text)?.[1]);
}

/** A call through the proxy (or to one instance's `base`): the ingest token for ingestion and directives, the admin key otherwise. */
async function call(path: string, init: { method?: string; body?: unknown; base?: string; signal?: AbortSignal } = {}) {
  const ingest = /^\/api\/v1\/(events|directives)/.test(path);
  const response = await fetch(`${init.base ?? proxy.url}${path}`, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: { authorization: `Bearer ${ingest ? TOKEN : apiKey()}`, "content-type": "application/json" },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: init.signal,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

async function ingest(events: object[], base?: string) {
  const answer = await call("/api/v1/events", { body: events, base });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(answer.body.rejected).toEqual([]);
  return answer.body as { accepted: number; duplicates: number };
}

let seq = 0;
const uid = (name: string) => `${name}-${Date.now().toString(36)}-${seq++}`;

/** A new thread waiting two minutes for its retry: a Stop has something to interrupt. */
async function retryingThread(name: string): Promise<string> {
  const threadId = uid(name);
  const now = Date.now();
  await ingest([
    { threadId, type: "turn.started", turnId: "u1", at: now },
    { threadId, type: "retry", turnId: "u1", at: now, attempt: 1, maxAttempts: 5, error: { httpStatus: 429, retryAfter: "120" } },
  ]);
  return threadId;
}

/** A live stream (GET /api/v1/stream) on one instance: what it has received so far, as text. */
async function openStream(base: string) {
  const controller = new AbortController();
  const response = await fetch(`${base}/api/v1/stream`, { headers: { authorization: `Bearer ${apiKey()}` }, signal: controller.signal });
  expect(response.status).toBe(200);
  let text = "";
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        text += decoder.decode(value, { stream: true });
      }
    } catch {
      // aborted
    }
  })();
  await waitFor(() => text.includes("event: hello"), PATIENCE_MS);
  return { received: () => text, close: () => controller.abort() };
}

describe("several instances on one PostgreSQL database", () => {
  it("a live stream on instance B hears an event ingested through instance A", async () => {
    const stream = await openStream(servers[1].url);
    try {
      const threadId = uid("cross");
      const sent = Date.now();
      await ingest([{ threadId, type: "turn.started", turnId: "u1", at: sent }], servers[0].url);
      // The notice carries the thread's row, read on B from the shared database.
      await waitFor(() => stream.received().includes(`"id":"${threadId}"`), PATIENCE_MS, () => stream.received(), 5);
      process.stdout.write(`[instances] ingested on A, its row on B's live stream ${Date.now() - sent} ms after the POST was sent\n`);
    } finally {
      stream.close();
    }
  });

  it("a Stop pressed on instance A wakes a relay long-polling on instance B at once", async () => {
    const threadId = await retryingThread("wake");
    const WAIT_S = 30;
    const started = Date.now();
    const poll = (async () => {
      for (;;) {
        const answer = await call(`/api/v1/directives?wait=${WAIT_S}`, { base: servers[1].url });
        const found = answer.body.directives.find((d: { threadId: string }) => d.threadId === threadId);
        if (found) return found;
      }
    })();
    // The long-poll is waiting on B before the stop is pressed on A.
    await waitFor(async () => (await queryDatabase(servers[0], `SELECT id FROM "Source" WHERE "lastPolledAt" >= ?`, [new Date(started)])).length > 0, PATIENCE_MS);
    const stop = await call(`/api/v1/threads/${threadId}/stop`, { body: { reason: "test" }, base: servers[0].url });
    expect(stop.status, JSON.stringify(stop.body)).toBe(202);
    const directive = await poll;
    expect(directive).toMatchObject({ kind: "interrupt" });
    // Woken by the stop, not by the end of its wait (which would find it all the same).
    expect(Date.now() - started).toBeLessThan((WAIT_S * 1000) / 2);
    expect((await call(`/api/v1/directives/${directive.id}/ack`, { body: { result: "acknowledged", detail: "interrupted" } })).status).toBe(200);
  });

  it("delivers a directive once per acknowledgement whichever instance the relay reaches", async () => {
    const threadId = await retryingThread("once");
    // Three relays long-poll at once through the proxy, so one waits on each instance.
    const mine = (answer: { body: { directives: { id: string; threadId: string }[] } }) => answer.body.directives.filter((d) => d.threadId === threadId);
    const polls = Array.from({ length: INSTANCES }, () => call("/api/v1/directives?wait=4"));
    // The first delivery comes after this: the early look below proves something only while the
    // redelivery delay since then has not passed (a busy machine may take longer than that).
    const stopSent = Date.now();
    const stop = await call(`/api/v1/threads/${threadId}/stop`, { body: { reason: "test" } });
    expect(stop.status, JSON.stringify(stop.body)).toBe(202);
    // The early look starts as soon as one relay has it, not when the others' waits end.
    const delivered = Promise.any(
      polls.map(async (poll) => {
        if (!mine(await poll).length) throw new Error("this relay got nothing");
      }),
    );
    await delivered.catch(() => undefined);
    // Not acknowledged: nobody gets it again before the redelivery delay, whoever asks…
    const early = await Promise.all(Array.from({ length: INSTANCES }, () => call("/api/v1/directives?wait=0")));
    const judged = Date.now() - stopSent < REDELIVER_MS;
    const first = (await Promise.all(polls)).flatMap(mine);
    expect(first).toHaveLength(1);
    const id = first[0].id;
    if (judged) expect(early.flatMap(mine)).toEqual([]);
    else process.stdout.write(`[instances] the early look ended ${Date.now() - stopSent} ms after the stop, past the redelivery delay: not judged\n`);
    // …then one relay gets it again, through whichever instance.
    const again = await waitFor(async () => {
      const answers = await Promise.all(Array.from({ length: INSTANCES }, () => call("/api/v1/directives?wait=0")));
      const found = answers.flatMap(mine);
      return found.length ? found : null;
    }, PATIENCE_MS);
    expect(again.map((d) => d.id)).toEqual([id]);
    expect((await call(`/api/v1/directives/${id}/ack`, { body: { result: "acknowledged", detail: "interrupted" } })).status).toBe(200);
    // Acknowledged: never delivered again, past the redelivery delay, on any instance.
    const after = Date.now();
    const late: unknown[] = [];
    while (Date.now() - after < REDELIVER_MS * 2) {
      late.push(...(await Promise.all(Array.from({ length: INSTANCES }, () => call("/api/v1/directives?wait=1")))).flatMap(mine));
    }
    expect(late).toEqual([]);
  });

  it("concurrent ingestion to every instance stores each event once, and resends store nothing", async () => {
    const run = uid("flood");
    // Batches of shared threads, sent to every instance at once; then each batch again to another.
    const batches = Array.from({ length: 12 }, (_, b) =>
      Array.from({ length: 25 }, (_, i) => ({ id: `${run}-${b}-${i}`, threadId: `${run}-t${i % 5}`, type: "turn.started", turnId: `u${b}-${i}`, at: Date.now() })),
    );
    const sent = await Promise.all(batches.map((events, b) => ingest(events, servers[b % INSTANCES].url)));
    const resent = await Promise.all(batches.map((events, b) => ingest(events, servers[(b + 1) % INSTANCES].url)));
    const total = batches.flat().length;
    expect(sent.reduce((sum, answer) => sum + answer.accepted, 0)).toBe(total);
    expect(resent.reduce((sum, answer) => sum + answer.duplicates, 0)).toBe(total);
    const [{ events, keys }] = await queryDatabase<{ events: number; keys: number }>(
      servers[0],
      `SELECT count(*)::int AS events, count(DISTINCT "idempotencyKey")::int AS keys FROM "Event" WHERE "idempotencyKey" LIKE ?`,
      [`${run}-%`],
    );
    expect({ events, keys }).toEqual({ events: total, keys: total });
    const threads = await queryDatabase(servers[0], `SELECT id FROM "Thread" WHERE "externalId" LIKE ?`, [`${run}-t%`]);
    expect(threads).toHaveLength(5);
  });

  it("kill -9 of the watchdog's leader during a countdown: another takes over, one exhausted episode and one interrupt", async () => {
    const watchdogLines = () => servers.map((server, i) => `instance ${i}: ${server.output().match(/\[radar\] watchdog[^\n]*/g)?.join(" / ")}`).join("\n");
    const leader = await waitFor(
      () => {
        const leading = servers.filter(leads);
        return leading.length === 1 ? leading[0] : null;
      },
      PATIENCE_MS,
      watchdogLines,
    );
    const others = servers.filter((server) => server !== leader);
    const threadId = uid("countdown");
    const now = Date.now();
    // A deadline about four seconds ahead: the notice + 3 s + the policy's 1 s grace.
    const policy = { ...FAST_STALL_POLICY, baseDelayMs: 3_000 };
    await ingest(
      [
        { threadId, type: "turn.started", turnId: "u1", at: now, policy },
        { threadId, type: "retry", turnId: "u1", at: now, attempt: 1, maxAttempts: 5, policy, error: { httpStatus: 429, message: "Reconnecting... 1/5" } },
      ],
      others[0].url,
    );
    const [{ wakeAt }] = await queryDatabase<{ wakeAt: Date }>(others[0], `SELECT "wakeAt" FROM "Thread" WHERE "externalId" = ?`, [threadId]);
    const deadline = new Date(wakeAt).getTime();
    expect(deadline).toBeGreaterThan(Date.now());
    const killedAt = Date.now();
    await leader.kill();
    // Through the proxy, which skips the dead instance.
    let last: unknown = null;
    const detail = await waitFor(
      async () => {
        const answer = await call(`/api/v1/threads/${threadId}`);
        last = answer.body;
        return answer.body?.episodes?.at(-1)?.outcome === "exhausted" ? answer.body : null;
      },
      PATIENCE_MS,
      () => `${watchdogLines()}\nlast answer: ${JSON.stringify(last)?.slice(0, 2000)}`,
    );
    expect(others.filter(leads)).toHaveLength(1);
    const episodes = await queryDatabase<{ outcome: string }>(others[0], `SELECT e.outcome FROM "Episode" e JOIN "Thread" t ON t.id = e."threadId" WHERE t."externalId" = ?`, [threadId]);
    expect(episodes).toEqual([{ outcome: "exhausted" }]);
    const directives = await queryDatabase<{ kind: string; createdAt: Date }>(
      others[0],
      `SELECT d.kind, d."createdAt" FROM "Directive" d JOIN "Thread" t ON t.id = d."threadId" WHERE t."externalId" = ?`,
      [threadId],
    );
    expect(directives.map((d) => d.kind)).toEqual(["interrupt"]);
    // The new leader fired it within a few seconds of the deadline (the server's own clock says when).
    const late = new Date(directives[0].createdAt).getTime() - deadline;
    process.stdout.write(`[instances] leader killed ${deadline - killedAt} ms before the deadline; the new leader fired it ${late} ms after it\n`);
    expect(late).toBeLessThan(TAKEOVER_MS);
    expect(detail.directives).toEqual([expect.objectContaining({ kind: "interrupt", origin: "policy" })]);
  });
});

describe("a watchdog leader stopped gracefully (SIGTERM)", () => {
  it("lets go before its process exits: a standby whose own retry is minutes away takes over at once", async () => {
    const url = await freshDatabase(inject("postgresUrl"), "handover");
    const env = { RADAR_INGEST_TOKEN: TOKEN };
    const leader = await startServer(env, { databaseUrl: url });
    // A standby that would try the lock again only after ten minutes (the test gives up long
    // before): only the leader's word on letting go can make it lead within the test.
    let standby: RunningServer | null = null;
    try {
      await waitFor(() => leads(leader), PATIENCE_MS, () => leader.output());
      standby = await startServer({ ...env, RADAR_WATCHDOG_LEASE_MS: "600000" }, { databaseUrl: url });
      const waiting = standby;
      // The standby has listened for the leader's word and found the lock taken.
      await waitFor(
        async () => {
          const [{ n }] = await queryDatabase<{ n: number }>(
            waiting,
            `SELECT count(*)::int AS n FROM pg_stat_activity a
             WHERE a.application_name = 'radar-leader' AND a.datname = current_database() AND a.query LIKE 'SELECT pg_try_advisory_lock%'
               AND NOT EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid AND l.locktype = 'advisory' AND l.granted)`,
          );
          return n === 1;
        },
        PATIENCE_MS,
      );
      expect(await leaderGauge(leader)).toBe(1);
      expect(await leaderGauge(waiting)).toBe(0);
      const stopped = Date.now();
      await leader.stop();
      expect(leader.output()).toMatch(/watchdog: this instance \(pid \d+\) stepped down/);
      await waitFor(() => leads(waiting), PATIENCE_MS, () => waiting.output());
      process.stdout.write(`[instances] the standby led ${Date.now() - stopped} ms after the leader was sent SIGTERM\n`);
      expect(await leaderGauge(waiting)).toBe(1);
    } finally {
      await Promise.all([leader.stop(), standby?.stop()]);
    }
  });
});
