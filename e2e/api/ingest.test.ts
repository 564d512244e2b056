import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCapture } from "@/lib/ingest";
import { PATIENCE_MS } from "../support/patience";
import { FAST_STALL_POLICY } from "../support/policies";
import { get, post, queryDatabase, startServer, storeOfServer, type RunningServer } from "../support/server";
import { fixturesDir } from "@/lib/ingest/test-fixtures";

/**
 * The ingestion API against the built app and a real database (SQLite, or PostgreSQL in the postgres-e2e run): native captures, the
 * watchdog, directives end to end, idempotency and every bad-input answer.
 */
const fixtures = fixturesDir();
const capture = (name: string) => parseCapture(fs.readFileSync(path.join(fixtures, name), "utf8"));

/**
 * Two servers. `server` gives a stop a long acknowledgement grace, so a test that stops a thread
 * and then acknowledges (or reads it `stopping`) never races the watchdog, however busy the
 * machine; a delivered directive is delivered again after REDELIVER_MS. `fastServer` has a
 * short grace for the tests that wait for the watchdog to end a thread by itself.
 */
const STOP_GRACE_MS = 120_000;
const FAST_STOP_GRACE_MS = 1_500;
const REDELIVER_MS = 2_000;
let server: RunningServer;
let fastServer: RunningServer;

beforeAll(async () => {
  [server, fastServer] = await Promise.all([
    startServer({ RADAR_STOP_GRACE_MS: String(STOP_GRACE_MS), RADAR_REDELIVER_MS: String(REDELIVER_MS) }),
    startServer({ RADAR_STOP_GRACE_MS: String(FAST_STOP_GRACE_MS) }),
  ]);
});
afterAll(async () => {
  await Promise.all([server?.stop(), fastServer?.stop()]);
});

async function thread(id: string, on: RunningServer = server) {
  const response = await get(on, `/api/v1/threads/${encodeURIComponent(id)}`);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs = PATIENCE_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    last = await probe();
    if (last) return last as T;
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("the server", () => {
  it("answers /api/health with the database ready", async () => {
    const health = await get(server, "/api/health");
    expect(health.status).toBe(200);
    // An anonymous caller learns only that it is up and which version; the database is checked on disk.
    expect(health.body).toEqual({ status: "ok", version: expect.any(String) });
    if (storeOfServer(server) === "sqlite") {
      const sqlite = new Database(server.databaseFile, { readonly: true });
      expect(sqlite.pragma("journal_mode", { simple: true })).toBe("wal");
      sqlite.close();
    }
  });

  it("stores the ingest token only as a hash", async () => {
    const rows = await queryDatabase<{ tokenHash: string; prefix: string }>(server, `SELECT "tokenHash", prefix FROM "IngestToken"`);
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(server.token);
    expect(rows[0].tokenHash).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe("ingestion rejects what it cannot take, and says why", () => {
  it("refuses a missing or wrong token with 401", async () => {
    const none = await fetch(`${server.url}/api/v1/events`, { method: "POST", body: "{}" });
    expect(none.status).toBe(401);
    expect(none.headers.get("content-type")).toContain("application/problem+json");
    const wrong = await post({ ...server, token: "rr_wrong" } as RunningServer, "/api/v1/events", { threadId: "x", type: "progress" });
    expect(wrong.status).toBe(401);
  });

  it("answers an unparseable body with 400 problem+json and stores nothing", async () => {
    const response = await post(server, "/api/v1/events", '{"threadId": "t-bad", "type": ');
    expect(response.status).toBe(400);
    expect(response.body.detail).toMatch(/JSON/i);
    expect((await get(server, "/api/v1/threads/t-bad")).status).toBe(404);
  });

  it("refuses a body that is too large with 413", async () => {
    const response = await post(server, "/api/v1/events", "x".repeat(11 * 1024 * 1024));
    expect(response.status).toBe(413);
  });

  it("closes the connection after a 413, so a client that keeps connections alive gets its next answer", async () => {
    // The refused body was not read to its end: reusing that socket used to end in ECONNRESET
    // for most follow-up requests. Several rounds, since a reset only happened on most of them.
    for (let round = 0; round < 5; round++) {
      const refused = await fetch(`${server.url}/api/v1/events`, {
        method: "POST",
        headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
        body: "x".repeat(11 * 1024 * 1024),
      });
      expect(refused.status).toBe(413);
      expect(refused.headers.get("connection")).toBe("close");
      await refused.text();
      const next = await post(server, "/api/v1/events", [{ threadId: `t-after-413-${round}`, type: "turn.started", turnId: "u1" }]);
      expect(next.status).toBe(200);
    }
  });

  it("keeps the good items of a batch and names every bad one by index and field", async () => {
    const response = await post(server, "/api/v1/events", [
      { threadId: "t-mixed", type: "thread.started" },
      { threadId: "t-mixed", type: "retry", error: { httpStatus: 4290 } },
      { type: "progress" },
      { threadId: "t-mixed", type: "turn.started", turnId: "u1" },
    ]);
    expect(response.status).toBe(200);
    expect(response.body.accepted).toBe(2);
    expect(response.body.rejected.map((r: { index: number }) => r.index)).toEqual([1, 2]);
    expect(response.body.rejected[0].error).toMatch(/error\.httpStatus/);
    expect(response.body.rejected[1].error).toMatch(/threadId/);
    expect((await thread("t-mixed")).thread.status).toBe("running");
  });

  it("takes NDJSON and counts a re-sent idempotency key as a duplicate, stored once", async () => {
    const lines = [
      { id: "dup-1", threadId: "t-dup", type: "turn.started", turnId: "u1" },
      { id: "dup-2", threadId: "t-dup", type: "retry", turnId: "u1", attempt: 1, maxAttempts: 5, error: { httpStatus: 429, message: "slow down" } },
    ]
      .map((line) => JSON.stringify(line))
      .join("\n");
    const first = await post(server, "/api/v1/events", lines, { "content-type": "application/x-ndjson" });
    const second = await post(server, "/api/v1/events", lines, { "content-type": "application/x-ndjson" });
    expect(first.body).toMatchObject({ accepted: 2, duplicates: 0 });
    expect(second.body).toMatchObject({ accepted: 0, duplicates: 2 });
    const detail = await thread("t-dup");
    expect(detail.events.filter((e: { type: string }) => e.type !== "progress")).toHaveLength(2);
  });
});

describe("native captures of real agents give the statuses an operator expects", () => {
  it.each([
    ["codex-appserver-429-then-ok.jsonl", "codex", "completed", "rate_limit", 2],
    ["codex-appserver-503-capacity.jsonl", "codex", "failed", "capacity", 0],
    ["codex-exec-429-then-ok.jsonl", "codex-exec", "completed", "rate_limit", 2],
    ["codex-exec-429-always.jsonl", "codex-exec", "failed", "rate_limit", 5],
    ["claude-a429-then-ok.jsonl", "claude", "completed", "rate_limit", 2],
    ["claude-a529-overloaded.jsonl", "claude", "failed", "capacity", 10],
  ])("%s through /api/v1/ingest/%s ends %s (%s, %i attempts)", async (file, format, status, kind, attempts) => {
    const parsed = capture(file);
    const response = await post(server, `/api/v1/ingest/${format}`, parsed.items);
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.rejected).toEqual([]);
    const threads = await get(server, `/api/v1/threads?pageSize=200`);
    const agentThreadId = findThreadId(parsed.items);
    const view = threads.body.threads.find((t: { id: string }) => t.id === agentThreadId);
    expect(view, `thread ${agentThreadId}`).toBeTruthy();
    expect(view.status).toBe(status);
    const detail = await thread(agentThreadId);
    const lastEpisode = detail.episodes.at(-1);
    if (attempts > 0) {
      expect(lastEpisode.kind).toBe(kind);
      expect(lastEpisode.attempts).toHaveLength(attempts);
    } else {
      expect(view.lastError.kind).toBe(kind);
    }
    // Re-importing the same capture changes nothing.
    const again = await post(server, `/api/v1/ingest/${format}`, parsed.items);
    expect(again.body.accepted).toBe(0);
    expect(again.body.duplicates).toBe(response.body.accepted + response.body.duplicates);
  });

  it("keeps unknown native message kinds as such", async () => {
    const response = await post(server, "/api/v1/ingest/codex", [
      { method: "thread/started", params: { thread: { id: "t-unknown", modelProvider: "openai", model: "gpt-5.5" } } },
      { method: "thread/somethingNew", params: { threadId: "t-unknown", detail: 1 } },
    ]);
    expect(response.body).toMatchObject({ accepted: 2, rejected: [] });
    const detail = await thread("t-unknown");
    expect(detail.events.map((e: { nativeType: string }) => e.nativeType)).toContain("thread/somethingNew");
  });
});

describe("episodes are stored as the engine ends them", () => {
  it("a notice of a new kind ends the open episode as superseded and starts another", async () => {
    await post(server, "/api/v1/events", [
      { threadId: "t-kinds", type: "turn.started", turnId: "u1" },
      { threadId: "t-kinds", type: "retry", turnId: "u1", attempt: 1, error: { httpStatus: 429 } },
      { threadId: "t-kinds", type: "retry", turnId: "u1", attempt: 1, error: { httpStatus: 503, code: "server_is_overloaded" } },
    ]);
    const detail = await thread("t-kinds");
    expect(detail.episodes.map((e: { kind: string; outcome: string | null }) => [e.kind, e.outcome])).toEqual([
      ["rate_limit", "superseded"],
      ["capacity", null],
    ]);
  });
});

describe("the watchdog ends silent waits by itself", () => {
  it("turns a 429 whose retry never comes exhausted, with an interrupt directive pending", async () => {
    const now = Date.now();
    await post(fastServer, "/api/v1/events", [
      { threadId: "t-silent", type: "turn.started", turnId: "u1", at: now, policy: FAST_STALL_POLICY },
      { threadId: "t-silent", type: "retry", turnId: "u1", at: now, attempt: 1, maxAttempts: 5, policy: FAST_STALL_POLICY, error: { httpStatus: 429, message: "Reconnecting... 1/5" } },
    ]);
    // The status is exhausted only for the stop grace (then broken, since nothing here acknowledges):
    // wait on what lasts, the episode's outcome and the directive.
    const detail = await waitFor("exhausted", async () => {
      const d = await thread("t-silent", fastServer);
      return d.episodes.at(-1)?.outcome === "exhausted" && d;
    });
    expect(["exhausted", "broken"]).toContain(detail.thread.status);
    expect(detail.episodes.at(-1)).toMatchObject({ outcome: "exhausted", outcomeCode: "rateLimitRetryExhausted" });
    expect(detail.directives).toEqual([expect.objectContaining({ kind: "interrupt", origin: "policy", state: "pending" })]);
    const graceEndsAt = detail.state.interrupt.graceEndsAt as number;
    expect(graceEndsAt - detail.state.interrupt.requestedAt).toBe(FAST_STOP_GRACE_MS);
  });
});

describe("Stop retrying reaches the source and comes back acknowledged", () => {
  it("delivers a stop to a long-polling source; its acknowledgement ends the thread stopped", async () => {
    const now = Date.now();
    await post(server, "/api/v1/events", [
      { threadId: "t-stop", type: "turn.started", turnId: "u1", at: now },
      { threadId: "t-stop", type: "retry", turnId: "u1", at: now, attempt: 1, maxAttempts: 5, error: { httpStatus: 429, retryAfter: "120" } },
    ]);
    // The source long-polls the way the relay does: every pending directive of the source comes
    // back (earlier tests left some), so it keeps polling until its thread's stop arrives.
    const received = (async () => {
      for (;;) {
        const delivered = await get(server, "/api/v1/directives?wait=10");
        expect(delivered.status).toBe(200);
        const found = delivered.body.directives.find((d: { threadId: string }) => d.threadId === "t-stop");
        if (found) return found;
      }
    })();
    const stop = await server.fetch(`${server.url}/api/v1/threads/t-stop/stop`, { method: "POST", body: JSON.stringify({ reason: "test" }) });
    expect(stop.status).toBe(202);
    // The grace is long: the thread stays stopping until the acknowledgement below.
    expect((await thread("t-stop")).thread.status).toBe("stopping");
    const directive = await received;
    expect(directive).toMatchObject({ kind: "interrupt", turnId: "u1" });
    const ack = await post(server, `/api/v1/directives/${directive.id}/ack`, { result: "acknowledged", detail: "turn interrupted" });
    expect(ack.status).toBe(200);
    const detail = await thread("t-stop");
    expect(detail.thread.status).toBe("stopped");
    expect(detail.directives[0]).toMatchObject({ state: "acknowledged", result: "acknowledged" });
  });

  it("marks a stop nobody acknowledges broken after the grace", async () => {
    const now = Date.now();
    await post(fastServer, "/api/v1/events", [
      { threadId: "t-unacked", type: "turn.started", turnId: "u1", at: now },
      { threadId: "t-unacked", type: "retry", turnId: "u1", at: now, attempt: 1, error: { httpStatus: 429, retryAfter: "120" } },
    ]);
    const stop = await fastServer.fetch(`${fastServer.url}/api/v1/threads/t-unacked/stop`, { method: "POST" });
    expect(stop.status).toBe(202);
    // `stopping` lasts only the short grace here: wait on what lasts. The stop's interrupt was
    // requested with the grace, and once it passed unacknowledged the thread is broken.
    const broken = await waitFor("broken", async () => {
      const d = await thread("t-unacked", fastServer);
      return d.thread.status === "broken" && d;
    });
    expect(broken.state.interrupt).toMatchObject({ origin: "operator", result: "unconfirmed" });
    expect(broken.state.interrupt.graceEndsAt - broken.state.interrupt.requestedAt).toBe(FAST_STOP_GRACE_MS);
    expect(broken.directives).toEqual([expect.objectContaining({ kind: "interrupt", origin: "operator" })]);
  });

  it("tells a source about pending directives in its next ingest response", async () => {
    const now = Date.now();
    await post(server, "/api/v1/events", [
      { threadId: "t-piggyback", type: "turn.started", turnId: "u1", at: now },
      { threadId: "t-piggyback", type: "retry", turnId: "u1", at: now, attempt: 1, error: { httpStatus: 503, code: "server_is_overloaded" } },
    ]);
    await server.fetch(`${server.url}/api/v1/threads/t-piggyback/stop`, { method: "POST" });
    const response = await post(server, "/api/v1/events", { threadId: "t-piggyback", type: "progress", turnId: "u1" });
    expect(response.body.directives).toEqual([expect.objectContaining({ threadId: "t-piggyback", kind: "interrupt" })]);
  });

  it("delivers a directive again when the source took it but never answered (a lost response)", async () => {
    const now = Date.now();
    await post(server, "/api/v1/events", [
      { threadId: "t-lost", type: "turn.started", turnId: "u1", at: now },
      { threadId: "t-lost", type: "retry", turnId: "u1", at: now, attempt: 1, error: { httpStatus: 429, retryAfter: "120" } },
    ]);
    await server.fetch(`${server.url}/api/v1/threads/t-lost/stop`, { method: "POST" });
    const firstAt = Date.now();
    const ids = async () => ((await get(server, "/api/v1/directives?wait=0")).body.directives as { id: string; threadId: string }[]).filter((d) => d.threadId === "t-lost").map((d) => d.id);
    const first = await ids();
    expect(first).toHaveLength(1);
    // Taken, it is not handed out again before REDELIVER_MS. Judged by the client's own clock: a
    // take that ended within REDELIVER_MS of the start of the take that delivered it must come
    // back empty. On a machine so busy that the second take came later than that, it may be a
    // legitimate redelivery and proves nothing: take it again (once delivered) and judge anew.
    let takenAt = firstAt;
    const give = Date.now() + PATIENCE_MS;
    for (;;) {
      expect(Date.now(), "never two takes within the redelivery interval").toBeLessThan(give);
      const startedAt = Date.now();
      const again = await ids();
      if (Date.now() - takenAt < REDELIVER_MS) {
        expect(again).toEqual([]);
        break;
      }
      if (again.length) {
        expect(again).toEqual(first);
        takenAt = startedAt;
      } else await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Unanswered, it comes back once the interval has passed.
    const redelivered = await waitFor("redelivery", async () => {
      const again = await ids();
      return again.length > 0 && again;
    });
    expect(redelivered).toEqual(first);
    expect(Date.now() - takenAt).toBeGreaterThanOrEqual(REDELIVER_MS);
    await post(server, `/api/v1/directives/${first[0]}/ack`, { result: "acknowledged" });
    // Answered, it is never delivered again, not even after the interval.
    await new Promise((resolve) => setTimeout(resolve, REDELIVER_MS + 500));
    expect(await ids()).toEqual([]);
  });

  it("refuses a stop posted by a page on another site (a browser's cross-site request)", async () => {
    const forged = await server.fetch(`${server.url}/api/v1/threads/t-dup/stop`, {
      method: "POST",
      headers: { "sec-fetch-site": "cross-site", origin: "https://evil.example" },
    });
    expect(forged.status).toBe(403);
    expect((await thread("t-dup")).thread.status).not.toBe("stopping");
  });

  it("rejects an acknowledgement of an unknown directive with 404", async () => {
    const response = await post(server, "/api/v1/directives/nope/ack", { result: "acknowledged" });
    expect(response.status).toBe(404);
    const bad = await post(server, "/api/v1/directives/nope/ack", { result: "maybe" });
    expect(bad.status).toBe(400);
    expect(bad.body.detail).toMatch(/result/);
  });
});

/** The agent's own thread id in a capture (Codex thread id, exec thread_id, Claude session_id). */
function findThreadId(items: { message: Record<string, unknown> }[]): string {
  for (const { message } of items) {
    const m = message as any;
    const id = m.params?.thread?.id ?? m.thread_id ?? m.session_id ?? m.params?.threadId;
    if (typeof id === "string") return id;
  }
  throw new Error("capture has no thread id");
}
