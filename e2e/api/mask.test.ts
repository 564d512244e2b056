import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MASK } from "@/lib/ingest/mask";
import { newApiKey } from "@/lib/auth/api-keys";
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

/**
 * Every shape of credential, planted in one line and read back as a viewer (an API key of the
 * viewer role): the raw payload, the thread's events, both exports and the thread page. Names
 * count by their words whatever the case style, with the credential word last; name/value pairs,
 * header pairs, URL query values, `X-Auth-*` headers and more key shapes. Usage counts stay.
 */
describe("every shape of credential, read as a viewer", () => {
  const id = `mask-shapes-${stamp}`;
  // Made-up values; each is unique, so finding one anywhere is a leak.
  const planted = {
    camelSecret: "plantedClientSecretQ1x",
    camelPassword: "plantedDbPasswordQ2x",
    camelToken: "plantedGithubTokenQ3x",
    camelApiKey: "plantedAnthropicApiKeyQ4x",
    nameValue: "plantedNameValueQ5x",
    keyValue: "plantedKeyValueQ6x",
    capitalPair: "plantedCapitalPairQ7x",
    headerPair: "plantedHeaderPairQ8x",
    bearerPair: "plantedBearerPairQ9x",
    xAuth: "plantedXAuthTokenR1x",
    queryKey: "plantedQueryKeyR2x",
    queryAccessToken: "plantedQueryAccessTokenR3x",
    querySig: "plantedQuerySigR4x",
    amzSignature: "plantedAmzSignatureR5x",
    fragmentToken: "plantedFragmentTokenR6x",
    textPair: "plantedTextPairR7x",
    stripe: "sk_live_51PlantedStripeKey0123456789ab",
    npm: "npm_PlantedNpmToken0123456789abcdefghijk",
    gitlab: "glpat-PlantedGitLab0123456789",
    huggingFace: "hf_PlantedHuggingFace0123456789abcdefg",
    // Whole quoted values, lists, two-word names, `*_PWD`, escaped query separators, webhooks.
    apostrophe: "plantedApostropheS1x",
    escaped: "plantedEscapedS2x",
    list: "plantedListS3x",
    spacedName: "plantedSpacedNameS4x",
    pwd: "plantedPwdS5x",
    htmlQuery: "plantedHtmlQueryS6x",
    urlAt: "plantedUrlAtS7x",
    slackHook: "plantedSlackHookS8x0123",
    discordHook: "plantedDiscordHookS9x_0123",
  };
  const shown = [`sk_live_…${MASK}`, `npm_…${MASK}`, `glpat-…${MASK}`, `hf_…${MASK}`];
  // What insights read, and names that only mention a credential: kept as sent.
  const readable = ["PWD=/home/agent", '"input_tokens":1234', '"max_tokens":4096', '"total_tokens":5330', '"cache_read_input_tokens":77', '"input_token_count":1234', '"auth.header_name":"authorization"', "page=2", "X-Amz-Expires=300"];
  let viewer: string;

  beforeAll(async () => {
    const key = newApiKey("mask-viewer", "viewer", null);
    await server.addApiKey(key.row);
    viewer = key.key;
    const sent = await post(server, "/api/v1/events", [
      {
        threadId: id,
        type: "retry",
        turnId: "s1",
        at: Date.now() - 1_000,
        attempt: 1,
        maxAttempts: 5,
        error: {
          httpStatus: 401,
          message: `GET https://api.example.test/v1/models?key=${planted.queryKey}&page=2 refused; keys ${planted.stripe} ${planted.npm} ${planted.gitlab} ${planted.huggingFace}`,
          headers: { "X-Auth-Token": planted.xAuth, "retry-after": "1" },
          details: {
            config: { clientSecret: planted.camelSecret, dbPassword: planted.camelPassword, githubToken: planted.camelToken, anthropicApiKey: planted.camelApiKey },
            params: [
              { name: "api_key", value: planted.nameValue },
              { key: "client_secret", value: planted.keyValue },
              { Name: "X-Api-Key", Value: planted.capitalPair },
            ],
            headerList: [
              ["X-Api-Key", planted.headerPair],
              ["Authorization", `Bearer ${planted.bearerPair}`],
            ],
            urls: [
              `wss://stream.example.test/v1?access_token=${planted.queryAccessToken}&sig=${planted.querySig}`,
              `https://bucket.example.test/object?X-Amz-Expires=300&X-Amz-Signature=${planted.amzSignature}`,
              `https://app.example.test/callback#access_token=${planted.fragmentToken}&state=s1`,
            ],
            logged: `request {"headers":[{"name":"Authorization","value":"${planted.textPair}"}]}`,
            quoted: [
              `password: "don't-${planted.apostrophe}" PWD=/home/agent DB_PWD=${planted.pwd}`,
              `{"password":"ab\\\\${planted.escaped}","set-cookie":["${planted.list}"]}`,
              `API key: ${planted.spacedName}; <a href="https://a.example.test/p?page=2&amp;key=${planted.htmlQuery}">`,
              `proxy https://ana:p@${planted.urlAt}@proxy.example.test/v1`,
              `https://hooks.slack.com/services/T0AB12CD3/B0EF45GH6/${planted.slackHook} https://discord.com/api/webhooks/1234567890123456789/${planted.discordHook}`,
            ],
            usage: { input_tokens: 1234, max_tokens: 4096, total_tokens: 5330, cache_read_input_tokens: 77, input_token_count: 1234 },
            "auth.header_name": "authorization",
          },
        },
      },
    ]);
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
  });

  /** A viewer's read of any body as text. */
  async function read(pathname: string) {
    const response = await server.fetch(pathname, { headers: { authorization: `Bearer ${viewer}` } });
    const text = await response.text();
    expect(response.status, `${pathname}: ${text.slice(0, 300)}`).toBe(200);
    return text;
  }

  function expectNoPlanted(text: string, where: string) {
    const leaked = Object.entries(planted).filter(([, secret]) => text.includes(secret));
    expect(leaked.map(([shape]) => shape), `${where} leaks`).toEqual([]);
  }

  it("the raw payload masks each shape and keeps the usage counts", async () => {
    const { thread } = await threadDetail(server, id);
    const events = JSON.parse(await read(`/api/v1/threads/by-key/${thread.key}/events?raw=1`)) as { events: { seq: number; type: string }[] };
    expectNoPlanted(JSON.stringify(events), "the events with raw payloads");
    const retry = events.events.find((event) => event.type === "retry")!;
    const raw = await read(`/api/v1/threads/by-key/${thread.key}/events/${retry.seq}/raw`);
    expectNoPlanted(raw, "the raw payload");
    for (const mask of shown) expect(raw, mask).toContain(mask);
    for (const kept of readable) expect(raw, kept).toContain(kept);
  });

  it.each(["json", "ndjson", "csv"])("the thread export (%s) masks each shape", async (format) => {
    expectNoPlanted(await read(`/api/v1/threads/${encodeURIComponent(id)}/export?format=${format}`), `the ${format} thread export`);
  });

  it.each(["attempts", "episodes", "threads"])("the %s export masks each shape", async (kind) => {
    expectNoPlanted(await read(`/api/v1/exports/${kind}?format=csv&q=${encodeURIComponent(id)}`), `the ${kind} export`);
  });

  it("the thread page masks each shape", async () => {
    const page = await read(`/threads/${encodeURIComponent(id)}`);
    expect(page).toContain(id);
    expectNoPlanted(page, "the thread page");
  });
});
