import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_INGEST_BODY_BYTES, MAX_ITEMS } from "@/lib/ingest/limits";
import { loadOtlpCapture } from "@/lib/ingest/otlp-fixtures";
import { get, startServer, threadDetail, type RunningServer } from "../support/server";

/**
 * The OpenTelemetry receiver against the built app: every captured export replayed exactly as
 * the agents sent it (JSON, and gzipped), the threads it makes, and every refusal an exporter
 * can meet.
 */
let server: RunningServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

async function send(path: string, body: string | Buffer, headers: Record<string, string> = {}, token: string | null = server.token) {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: typeof body === "string" ? body : new Uint8Array(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

async function replay(name: string, gzip: boolean) {
  for (const request of loadOtlpCapture(name)) {
    const json = JSON.stringify(request.body);
    const answer = gzip ? await send(request.path, gzipSync(json), { "content-encoding": "gzip" }) : await send(request.path, json);
    expect(answer.status, `${name} ${request.path}`).toBe(200);
    expect(answer.body, `${name} ${request.path}`).toEqual({});
  }
}

const CASES = [
  { name: "claude-otlp-429-then-ok-traces", thread: "dd611010-456e-4062-9462-f4562961a539", status: "completed", kind: "other", attempts: 2, agent: "claude-code" },
  { name: "claude-otlp-529-then-ok", thread: "6b29a0f9-bd1b-4c91-94f3-40f337f2843b", status: "completed", kind: null, attempts: 0, agent: "claude-code" },
  { name: "codex-otlp-appserver-429-always", thread: "01a22b92-ff9f-7db0-ac69-63bfd7a076c1", status: "failed", kind: "rate_limit", attempts: 5, agent: "codex" },
  { name: "codex-otlp-exec-429-then-ok", thread: "01a22b90-2290-7dd0-aa8c-db3eaae2896a", status: "completed", kind: "rate_limit", attempts: 2, agent: "codex-exec" },
];

describe("captured exports replayed through /v1/logs, /v1/traces and /v1/metrics", () => {
  it.each(CASES)("$name", async ({ name, thread, status, kind, attempts, agent }) => {
    // Codex's exports gzipped, Claude's as sent; then each again the other way: nothing doubles.
    const gzipFirst = name.startsWith("codex");
    await replay(name, gzipFirst);
    const detail = await threadDetail(server, thread);
    expect(detail.thread).toMatchObject({ status, agent });
    const episode = detail.episodes.at(-1);
    if (kind === null) expect(detail.episodes).toEqual([]);
    else expect(episode).toMatchObject({ kind });
    expect(episode?.attempts.length ?? 0).toBe(attempts);
    const events = detail.events.length;
    await replay(name, !gzipFirst);
    const again = await threadDetail(server, thread);
    expect(again.events.length).toBe(events);
    expect(again.thread.status).toBe(status);
  });

  it("Codex retry notices carry the exact delay of its codex.retry events", async () => {
    await replay("codex-otlp-appserver-429-always", false);
    const detail = await threadDetail(server, "01a22b92-ff9f-7db0-ac69-63bfd7a076c1");
    const delays = detail.events.filter((e: { type: string }) => e.type === "retry").map((e: { delayMs: number | null }) => e.delayMs);
    expect(delays).toEqual([1998, 1999, 1999, 1999, 1999]);
  });
});

describe("what an exporter can be refused", () => {
  const logs = JSON.stringify(loadOtlpCapture("claude-otlp-529-then-ok")[0].body);

  it("no token → 401", async () => {
    const answer = await send("/v1/logs", logs, {}, null);
    expect(answer.status).toBe(401);
    expect(answer.body.detail).toContain("ingest token");
  });

  it("a gzip bomb → 413, not memory", async () => {
    const bomb = gzipSync(Buffer.alloc(MAX_INGEST_BODY_BYTES + 1));
    expect(bomb.length).toBeLessThan(MAX_INGEST_BODY_BYTES / 100);
    const answer = await send("/v1/logs", bomb, { "content-encoding": "gzip" });
    expect(answer.status).toBe(413);
  });

  it("the protobuf bomb (10 MB of 0a 00, 10 KB gzipped) → 413 naming the bound, on every signal", async () => {
    const bomb = gzipSync(Buffer.from(new Uint8Array(10_000_000).map((_, i) => (i % 2 === 0 ? 0x0a : 0x00))));
    expect(bomb.length).toBeLessThan(10_000);
    for (const signal of ["logs", "traces", "metrics"]) {
      const answer = await send(`/v1/${signal}`, bomb, { "content-type": "application/x-protobuf", "content-encoding": "gzip" });
      expect(answer.status, signal).toBe(413);
      expect(answer.headers.get("content-type")).toBe("application/problem+json");
      // Stopped at the first resource entry past the bound: not one more was decoded.
      expect(answer.body).toMatchObject({ bound: "records", limit: MAX_ITEMS, counted: MAX_ITEMS + 1 });
      expect(answer.body.detail).toContain(`resource${signal === "traces" ? "Spans" : signal[0].toUpperCase() + signal.slice(1)}`);
    }
  });

  it("a body larger than the limit → 413", async () => {
    const answer = await send("/v1/logs", "x".repeat(MAX_INGEST_BODY_BYTES + 1));
    expect(answer.status).toBe(413);
  });

  it("an unknown content encoding → 415", async () => {
    const answer = await send("/v1/logs", logs, { "content-encoding": "br" });
    expect(answer.status).toBe(415);
  });

  it("a malformed record → partialSuccess, the others stored", async () => {
    const body = JSON.parse(logs);
    const records = body.resourceLogs[0].scopeLogs[0].logRecords;
    const broken = structuredClone(records[0]);
    broken.attributes = broken.attributes.filter((a: { key: string }) => a.key !== "session.id");
    records.push(broken);
    const answer = await send("/v1/logs", JSON.stringify(body));
    expect(answer.status).toBe(200);
    expect(answer.body.partialSuccess.rejectedLogRecords).toBe(1);
    expect(answer.body.partialSuccess.errorMessage).toContain("session.id");
  });

  it("metrics are accepted and make no thread", async () => {
    const [metrics] = loadOtlpCapture("codex-otlp-exec-429-then-ok").filter((r) => r.signal === "metrics");
    const answer = await send("/v1/metrics", JSON.stringify(metrics.body));
    expect(answer).toMatchObject({ status: 200, body: {} });
  });
});
