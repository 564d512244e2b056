import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MASK } from "@/lib/ingest/mask";
import { download, post, startServer, threadDetail, type RunningServer } from "../support/server";

/**
 * Credentials sent inside payloads never come back out: a canonical event and a Codex
 * app-server notification, each with an `authorization` header and an API key in its error
 * text, read back through the thread API, its events and raw payloads, and both exports.
 */
// Made-up keys of the real shapes.
const OPENAI_KEY = "sk-proj-9vQ2mT7wLp4KzN8bYc1dFg6hJs3aQe5uWo0iEr";
const ANTHROPIC_KEY = "sk-ant-api03-Xq9vR2mT7wLp4KzN8bYc1dFg6hJs3aQe5uWo0iEr-2tYx7ZAAA";
const BEARER_TOKEN = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZ2VudC0xMjMifQ.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg";
const SECRETS = [OPENAI_KEY, ANTHROPIC_KEY, BEARER_TOKEN];

const stamp = Date.now().toString(36);
const CANONICAL = `mask-canonical-${stamp}`;
const CODEX = `mask-codex-${stamp}`;

let server: RunningServer;

beforeAll(async () => {
  server = await startServer();
  const at = Date.now() - 5_000;
  const canonical = await post(server, "/api/v1/events", [
    { threadId: CANONICAL, type: "turn.started", turnId: "u1", at },
    // A retried rate limit (an attempt in the exports), then the provider refusing the key.
    {
      threadId: CANONICAL,
      type: "retry",
      turnId: "u1",
      at: at + 500,
      attempt: 1,
      maxAttempts: 5,
      error: { httpStatus: 429, message: `Rate limit reached for key ${OPENAI_KEY}`, headers: { "x-api-key": OPENAI_KEY, "retry-after": "1" } },
    },
    {
      threadId: CANONICAL,
      type: "retry",
      turnId: "u1",
      at: at + 1000,
      attempt: 2,
      maxAttempts: 5,
      error: {
        httpStatus: 401,
        code: "invalid_api_key",
        message: `Incorrect API key provided: ${OPENAI_KEY}.`,
        headers: { Authorization: `Bearer ${BEARER_TOKEN}`, "Retry-After": "30" },
      },
    },
  ]);
  expect(canonical.status, JSON.stringify(canonical.body)).toBe(200);
  expect(canonical.body.accepted).toBe(3);

  const codex = await post(server, "/api/v1/ingest/codex", [
    { method: "thread/started", params: { thread: { id: CODEX } }, emittedAtMs: at },
    { method: "turn/started", params: { threadId: CODEX, turn: { id: "c1" } }, emittedAtMs: at + 500 },
    {
      method: "error",
      params: {
        threadId: CODEX,
        turnId: "c1",
        willRetry: true,
        error: {
          message: `Reconnecting... 1/5 (unexpected status 429 Too Many Requests for x-api-key ${ANTHROPIC_KEY})`,
          codexErrorInfo: { responseStreamDisconnected: { httpStatusCode: 429 } },
          additionalDetails: `request headers: {"authorization":"Bearer ${BEARER_TOKEN}","x-api-key":"${ANTHROPIC_KEY}"}`,
        },
      },
      emittedAtMs: at + 1000,
    },
  ]);
  expect(codex.status, JSON.stringify(codex.body)).toBe(200);
  expect(codex.body.accepted).toBe(3);
});
afterAll(async () => {
  await server?.stop();
});

/** Every secret absent, and the masked forms that say which kind of credential it was present. */
function expectMasked(text: string, ...shown: string[]) {
  for (const secret of SECRETS) expect(text.includes(secret), `a secret in ${text.slice(0, 300)}…`).toBe(false);
  for (const mask of shown) expect(text, mask).toContain(mask);
}

describe.each([
  [CANONICAL, `sk-proj-…${MASK}`],
  [CODEX, `sk-ant-…${MASK}`],
])("thread %s", (id, keyMask) => {
  it("the thread API shows the error with its key masked", async () => {
    const detail = await threadDetail(server, id);
    expectMasked(JSON.stringify(detail), keyMask);
  });

  it("events and raw payloads show the authorization header and the key masked", async () => {
    const { thread } = await threadDetail(server, id);
    const page = await download(server, `/api/v1/threads/by-key/${thread.key}/events?raw=1`);
    expect(page.status, page.text).toBe(200);
    expectMasked(page.text, keyMask, `Bearer eyJ…${MASK}`);
    const events = (JSON.parse(page.text) as { events: { seq: number; type: string }[] }).events;
    const retry = events.find((event) => event.type === "retry")!; // the newest
    const raw = await download(server, `/api/v1/threads/by-key/${thread.key}/events/${retry.seq}/raw`);
    expect(raw.status, raw.text).toBe(200);
    expectMasked(raw.text, keyMask, `Bearer eyJ…${MASK}`);
  });

  it.each(["json", "ndjson", "csv"])("the thread export (%s) shows them masked", async (format) => {
    const exported = await download(server, `/api/v1/threads/${encodeURIComponent(id)}/export?format=${format}`);
    expect(exported.status, exported.text).toBe(200);
    expectMasked(exported.text, keyMask, `Bearer eyJ…${MASK}`);
  });

  it.each(["attempts", "episodes", "threads"])("the %s export shows no secret", async (kind) => {
    const exported = await download(server, `/api/v1/exports/${kind}?format=csv&q=${encodeURIComponent(id)}`);
    expect(exported.status, exported.text).toBe(200);
    // Attempts carry each notice's text; a thread's last error may already be the watchdog's.
    expectMasked(exported.text, ...(kind === "attempts" ? [keyMask] : []));
  });
});
