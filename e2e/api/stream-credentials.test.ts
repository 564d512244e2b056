import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newApiKey } from "@/lib/auth/api-keys";
import { LONG_POLLS_PER_TOKEN, LONG_POLL_RETRY_AFTER_S } from "@/lib/server/directives";
import { builtAction, callAction, type ActionInput } from "../support/actions";
import { queryDatabase, startServer, type RunningServer } from "../support/server";

/**
 * Credentials withdrawn while a live stream is open, against the built server: a viewer's API
 * key revoked by an admin, a person's sessions signed out everywhere, a person disabled. Each
 * stream ends at once with `event: end` ({reason: "credentials"}) and opening it again is refused.
 * And a token's directive long-polls are capped (429 with Retry-After beyond).
 */
const ADMIN = { email: "lead@stream-credentials.test", password: "lead-stream-password" };
let server: RunningServer;

beforeAll(async () => {
  server = await startServer({ RADAR_ADMIN_EMAIL: ADMIN.email, RADAR_ADMIN_PASSWORD: ADMIN.password });
});
afterAll(() => server?.stop());

/** An admin action, called with the server's admin API key. */
const asAdmin = (name: string, input: ActionInput) => callAction(server.url, builtAction(name), input, { authorization: `Bearer ${server.apiKey}` });

async function signIn(email: string, password: string): Promise<string> {
  const { response, body } = await callAction(server.url, builtAction("lib/actions/sign-in.ts#signIn"), { form: { email, password } });
  const setCookie = response.headers.getSetCookie().find((cookie) => /session_token=/.test(cookie));
  if (!setCookie) throw new Error(`no session cookie: ${response.status} ${body.slice(0, 300)}`);
  return setCookie.split(";")[0];
}

/**
 * Opens the live stream with these headers and waits for its `hello`. `ended` resolves with the
 * last event once the server ends the stream (it never resolves while the stream stays open);
 * `seen(pattern)` resolves once the text received matches.
 */
async function openStream(headers: Record<string, string>) {
  const response = await fetch(`${server.url}/api/v1/stream`, { headers });
  expect(response.status).toBe(200);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const waiters: (() => void)[] = [];
  const ended = (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true as const }));
      if (done) break;
      text += value;
      for (const wake of waiters.splice(0)) wake();
    }
    for (const wake of waiters.splice(0)) wake();
    return text.split("\n\n").filter((block) => block.startsWith("event: ")).at(-1)!;
  })();
  const seen = async (pattern: RegExp) => {
    while (!pattern.test(text)) await new Promise<void>((resolve) => waiters.push(resolve));
  };
  await seen(/event: hello/);
  return { ended, seen, cancel: () => reader.cancel() };
}

const END_CREDENTIALS = `event: end\ndata: ${JSON.stringify({ reason: "credentials" })}`;
const streamStatus = async (headers: Record<string, string>) => {
  const response = await fetch(`${server.url}/api/v1/stream`, { headers });
  await response.body?.cancel();
  return response.status;
};

describe("a live stream ends at once when its credentials are withdrawn", () => {
  it("a viewer's API key revoked by an admin", async () => {
    const { key, row } = newApiKey("stream-viewer", "viewer", null);
    await server.addApiKey(row);
    const other = newApiKey("stream-other", "viewer", null);
    await server.addApiKey(other.row);
    const headers = { authorization: `Bearer ${key}` };
    const stream = await openStream(headers);
    const untouched = await openStream({ authorization: `Bearer ${other.key}` });
    const { result } = await asAdmin("lib/actions/revoke-api-key.ts#revokeApiKey", { form: { keyId: row.id } });
    expect(result).toMatchObject({ ok: true });
    expect(await stream.ended).toBe(END_CREDENTIALS);
    expect(await streamStatus(headers)).toBe(401);
    // Another key's stream goes on: it still hears of a batch ingested after the revocation.
    const sent = await fetch(`${server.url}/api/v1/events`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      body: JSON.stringify([{ threadId: "stream-credentials-1", type: "turn.started", turnId: "t1" }]),
    });
    expect(sent.status, await sent.text()).toBe(200);
    await untouched.seen(/event: threads/);
    await untouched.cancel();
  });

  it("a person's sessions signed out everywhere", async () => {
    const here = await signIn(ADMIN.email, ADMIN.password);
    const elsewhere = await signIn(ADMIN.email, ADMIN.password);
    const stream = await openStream({ cookie: elsewhere });
    const { result } = await callAction(server.url, builtAction("lib/actions/sign-out.ts#signOut"), { object: { everywhere: true } }, { cookie: here });
    expect(result).toMatchObject({ ok: true });
    expect(await stream.ended).toBe(END_CREDENTIALS);
    expect(await streamStatus({ cookie: elsewhere })).toBe(401);
  });

  it("a person disabled by an admin, their session's stream and their key's", async () => {
    const person = { email: "viewer@stream-credentials.test", password: "viewer-stream-password" };
    const { result } = await asAdmin("lib/actions/create-person.ts#addPerson", { form: { ...person, role: "viewer" } });
    expect(result).toMatchObject({ ok: true });
    const [{ id }] = await queryDatabase<{ id: string }>(server, `SELECT id FROM "User" WHERE email = ?`, [person.email]);
    const owned = newApiKey("stream-owned", "viewer", id);
    await server.addApiKey(owned.row);
    const cookie = await signIn(person.email, person.password);
    const session = await openStream({ cookie });
    const keyed = await openStream({ authorization: `Bearer ${owned.key}` });
    const disabled = await asAdmin("lib/actions/disable-person.ts#disablePerson", { form: { personId: id } });
    expect(disabled.result).toMatchObject({ ok: true });
    expect(await session.ended).toBe(END_CREDENTIALS);
    expect(await keyed.ended).toBe(END_CREDENTIALS);
    expect(await streamStatus({ cookie })).toBe(401);
  });
});

describe("directive long-polls", () => {
  it(`are capped at ${LONG_POLLS_PER_TOKEN} per ingest token: beyond, 429 problem+json with Retry-After`, async () => {
    const poll = (wait: number, signal?: AbortSignal) => fetch(`${server.url}/api/v1/directives?wait=${wait}`, { headers: { authorization: `Bearer ${server.token}` }, signal });
    const holders = Array.from({ length: LONG_POLLS_PER_TOKEN }, () => new AbortController());
    const held = holders.map((controller) => poll(30, controller.signal).catch(() => null));
    // The holders are admitted when they arrive: poll (1 s each) until one more is refused.
    let refused: Response | null = null;
    for (let i = 0; i < 60 && !refused; i++) {
      const answer = await poll(1);
      if (answer.status === 429) refused = answer;
      else await answer.arrayBuffer();
    }
    expect(refused?.status).toBe(429);
    expect(refused!.headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(refused!.headers.get("retry-after")).toBe(String(LONG_POLL_RETRY_AFTER_S));
    expect(((await refused!.json()) as { detail: string }).detail).toMatch(new RegExp(`${LONG_POLLS_PER_TOKEN} directive long-polls`));
    // A poll that does not wait holds nothing and is answered.
    expect((await poll(0)).status).toBe(200);
    // Once one holder leaves, a long-poll is admitted again.
    holders[0].abort();
    let admitted = 0;
    for (let i = 0; i < 60 && admitted !== 200; i++) {
      const answer = await poll(1);
      admitted = answer.status;
      await answer.arrayBuffer();
    }
    expect(admitted).toBe(200);
    for (const controller of holders) controller.abort();
    await Promise.all(held);
  });
});
