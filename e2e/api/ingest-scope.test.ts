import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { get, post, startServer, threadDetail, type RunningServer } from "../support/server";

/**
 * Ingest tokens stay narrow: a source's token sends events and polls and acknowledges its own
 * source's directives, and nothing else: no reads, no stops, no other source's directives. And an
 * API key, which reads and stops, does not ingest.
 */
let server: RunningServer;
let other: { id: string; token: string };
const mine = `scope-mine-${Date.now().toString(36)}`;
const theirs = `scope-theirs-${Date.now().toString(36)}`;

const retrying = (threadId: string) => [
  { threadId, type: "turn.started", turnId: "t1", agent: "codex", provider: "openai", model: "gpt-5.5" },
  { threadId, type: "retry", turnId: "t1", attempt: 1, maxAttempts: 5, error: { httpStatus: 429, message: "Rate limit reached." } },
];

async function send(token: string, pathname: string, init: RequestInit = {}) {
  const response = await fetch(`${server.url}${pathname}`, { ...init, headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...init.headers } });
  return { status: response.status, text: await response.text() };
}

beforeAll(async () => {
  server = await startServer();
  other = await server.addSource("other-team");
  expect((await post(server, "/api/v1/events", retrying(mine))).status).toBe(200);
  expect((await send(other.token, "/api/v1/events", { method: "POST", body: JSON.stringify(retrying(theirs)) })).status).toBe(200);
});
afterAll(() => server?.stop());

describe("an ingest token", () => {
  it.each([
    "/api/v1/threads",
    `/api/v1/threads/${mine}`,
    `/api/v1/threads/${mine}/export`,
    "/api/v1/exports/threads",
    "/api/v1/exports/events",
    "/api/v1/insights",
    "/api/metrics",
    "/api/v1/stream",
  ])("cannot read %s", async (pathname) => {
    const answer = await send(server.token, pathname);
    expect(answer.status, pathname).toBe(401);
    expect(answer.text).toContain("ingest token only sends events");
    expect(answer.text).not.toContain(mine);
  });

  it("cannot stop a thread, even its own source's", async () => {
    const answer = await send(server.token, `/api/v1/threads/${mine}/stop`, { method: "POST", body: "{}" });
    expect(answer.status).toBe(401);
    expect((await threadDetail(server, mine)).thread.status).toBe("retrying");
  });

  it("sees and acknowledges only its own source's directives", async () => {
    // An operator (the API key) stops the other source's thread: a directive for that source.
    expect((await post(server, `/api/v1/threads/${theirs}/stop`, {})).status).toBe(202);
    const polledByMine = await get(server, "/api/v1/directives?wait=0");
    expect(polledByMine.status).toBe(200);
    expect(polledByMine.body.directives.map((d: { threadId: string }) => d.threadId)).not.toContain(theirs);

    const polledByTheirs = await get(server, "/api/v1/directives?wait=0", other.token);
    const directive = polledByTheirs.body.directives.find((d: { threadId: string }) => d.threadId === theirs);
    expect(directive, JSON.stringify(polledByTheirs.body)).toBeDefined();

    // The first source's token cannot acknowledge it, as if the other agent had stopped.
    const forged = await post(server, `/api/v1/directives/${directive.id}/ack`, { result: "acknowledged" });
    expect(forged.status).toBe(404);
    expect((await threadDetail(server, theirs)).thread.status).toBe("stopping");

    const own = await send(other.token, `/api/v1/directives/${directive.id}/ack`, { method: "POST", body: JSON.stringify({ result: "acknowledged" }) });
    expect(own.status, own.text).toBe(200);
    expect((await threadDetail(server, theirs)).thread.status).toBe("stopped");
  });
});

describe("an API key", () => {
  it.each([
    ["POST", "/api/v1/events"],
    ["POST", "/api/v1/ingest/codex"],
    ["GET", "/api/v1/directives"],
    ["POST", "/api/v1/directives/any/ack"],
  ])("cannot %s %s", async (method, pathname) => {
    const answer = await send(server.apiKey, pathname, method === "POST" ? { method, body: JSON.stringify(retrying(`key-${pathname}`)) } : { method });
    expect(answer.status, pathname).toBe(401);
    expect(answer.text).toContain("An API key does not ingest");
  });
});
