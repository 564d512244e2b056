import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadOtlpCapture } from "@/lib/ingest/otlp-fixtures";
import { get, post, startServer, threadDetail, type RunningServer } from "../support/server";

/**
 * What a source can carry out, against the built app: a source that only sends OpenTelemetry
 * gets no stop (409, no directive, audited), a relay that announces `interrupt` gets one, and a
 * relay that announces nothing gets none. One server: each step changes what its one source announced.
 */
let server: RunningServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server?.stop();
});

const OTLP_THREAD = "01a22b92-ff9f-7db0-ac69-63bfd7a076c1";

async function sendOtlp(name: string) {
  for (const request of loadOtlpCapture(name)) {
    const response = await fetch(`${server.url}${request.path}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${server.token}` },
      body: JSON.stringify(request.body),
    });
    expect(response.status).toBe(200);
  }
}

async function retrying(threadId: string) {
  const now = new Date().toISOString();
  const answer = await post(server, "/api/v1/events", [
    { threadId, type: "turn.started", turnId: "u1", at: now },
    { threadId, type: "retry", turnId: "u1", at: now, attempt: 1, maxAttempts: 5, error: { httpStatus: 429, retryAfter: "120" } },
  ]);
  expect(answer.status).toBeLessThan(300);
}

const stop = (threadId: string) => server.fetch(`${server.url}/api/v1/threads/${threadId}/stop`, { method: "POST", body: JSON.stringify({ reason: "test" }) });

describe("what a source can carry out", () => {
  it("refuses a stop for a thread reported only by OpenTelemetry, with the reason, and creates no directive", async () => {
    await sendOtlp("codex-otlp-appserver-429-always");
    const before = await threadDetail(server, OTLP_THREAD);
    expect(before.thread.control).toEqual({ interrupt: false, continue: false, why: expect.stringContaining("OpenTelemetry") });
    const refused = await stop(OTLP_THREAD);
    expect(refused.status).toBe(409);
    expect(refused.headers.get("content-type")).toContain("application/problem+json");
    expect((await refused.json()).detail).toContain("attach the relay");
    const after = await threadDetail(server, OTLP_THREAD);
    expect(after.directives).toEqual(before.directives);
    expect(after.thread.status).toBe(before.thread.status);
  });

  it("accepts a stop once a relay announces it can interrupt", async () => {
    const polled = await get(server, "/api/v1/directives?wait=0&can=interrupt,continue");
    expect(polled.status).toBe(200);
    await retrying("c-relay");
    expect((await threadDetail(server, "c-relay")).thread.control).toEqual({ interrupt: true, continue: true, why: null });
    expect((await stop("c-relay")).status).toBe(202);
    expect((await threadDetail(server, "c-relay")).directives).toEqual([expect.objectContaining({ kind: "interrupt", origin: "operator" })]);
  });

  it("a one-shot relay can stop but not continue; a source announcing nothing can do neither", async () => {
    await get(server, "/api/v1/directives?wait=0&can=interrupt");
    await retrying("c-oneshot");
    expect((await threadDetail(server, "c-oneshot")).thread.control).toMatchObject({ interrupt: true, continue: false });
    await get(server, "/api/v1/directives?wait=0&can=");
    await retrying("c-none");
    expect((await threadDetail(server, "c-none")).thread.control).toMatchObject({ interrupt: false, continue: false, why: expect.stringContaining("nothing can reach") });
    expect((await stop("c-none")).status).toBe(409);
    expect((await threadDetail(server, "c-none")).directives).toEqual([]);
    // An older relay polls without announcing: its last announcement stays.
    await get(server, "/api/v1/directives?wait=0");
    expect((await threadDetail(server, "c-none")).thread.control.interrupt).toBe(false);
  });
});
