import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PATIENCE_MS } from "../support/patience";
import { post, queryDatabase, startServer, threadDetail, type RunningServer } from "../support/server";

/**
 * The ingestion listener in front of Next (lib/server/listener) answers the ingestion and
 * directive routes itself. Each request here goes to two servers: `server`, where the listener
 * answers it, and `nextServer` (RADAR_INGEST_LISTENER=next), where Next does: both must give the
 * same answer. The listener marks what it answered with `X-Radar-Listener: lean`, so each test
 * also proves which path answered.
 */
let server: RunningServer;
let nextServer: RunningServer;

beforeAll(async () => {
  [server, nextServer] = await Promise.all([startServer(), startServer({ RADAR_INGEST_LISTENER: "next" })]);
});
afterAll(() => Promise.all([server?.stop(), nextServer?.stop()]));

const portOf = (on: RunningServer) => Number(new URL(on.url).port);

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

interface Call {
  method: "GET" | "POST";
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * A request as a client sends it, to `on`, with its ingest token unless the call names other
 * headers (an empty one is left out); `PORT` in a header stands for that server's port.
 */
function send(on: RunningServer, call: Call): Promise<Answer> {
  const port = portOf(on);
  const headers: Record<string, string> = { authorization: `Bearer ${on.token}`, "content-type": "application/json" };
  for (const [name, value] of Object.entries(call.headers ?? {})) {
    if (value === "") delete headers[name];
    else headers[name] = value.replace("PORT", String(port));
  }
  return new Promise((resolve, reject) => {
    const request = http.request({ host: "127.0.0.1", port, method: call.method, path: call.path, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode!, headers: response.headers, text: Buffer.concat(chunks).toString("utf8").replaceAll(String(port), "PORT") }));
      response.on("error", reject);
    });
    request.on("error", reject);
    request.end(call.body);
  });
}

/** The same request through the listener and through Next. */
async function both(call: Call): Promise<{ lean: Answer; next: Answer }> {
  const [lean, next] = await Promise.all([send(server, call), send(nextServer, call)]);
  expect(lean.headers["x-radar-listener"], `${call.path} through the listener`).toBe("lean");
  expect(next.headers["x-radar-listener"], `${call.path} through Next`).toBeUndefined();
  return { lean, next };
}

/** An answer without what differs between any two calls (the server's clock). */
function comparable(answer: Answer) {
  const type = answer.headers["content-type"];
  const body = type?.includes("json") && answer.text ? JSON.parse(answer.text) : answer.text;
  if (body && typeof body === "object") delete body.serverTime;
  return { status: answer.status, type, body, security: answer.headers["x-content-type-options"] };
}

const thread = (name: string) => `${name}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`;

describe("the listener answers the ingestion routes as Next does", () => {
  it.each<[string, Call, number]>([
    ["an anonymous caller", { method: "POST", path: "/api/v1/events", headers: { authorization: "" }, body: "{}" }, 401],
    ["a wrong token", { method: "POST", path: "/api/v1/events", headers: { authorization: "Bearer rr_wrong" }, body: "{}" }, 401],
    ["a body over the limit", { method: "POST", path: "/api/v1/events", body: "x".repeat(11 * 1024 * 1024) }, 413],
    ["a foreign Host with a body", { method: "POST", path: "/api/v1/events", headers: { host: "evil.example:PORT" }, body: "{}" }, 421],
    ["a foreign Host on a long-poll", { method: "GET", path: "/api/v1/directives?wait=0", headers: { host: "evil.example:PORT" } }, 421],
    ["an undecodable path", { method: "POST", path: "/api/v1/ingest/%FF", body: "{}" }, 400],
    ["malformed JSON", { method: "POST", path: "/api/v1/events", body: '{"threadId": "t-bad", "type": ' }, 400],
    ["an unknown native format", { method: "POST", path: "/api/v1/ingest/nope", body: "{}" }, 404],
    ["an unknown directive's acknowledgement", { method: "POST", path: "/api/v1/directives/nope/ack", body: '{"result":"acknowledged"}' }, 404],
    ["a bad long-poll query", { method: "GET", path: "/api/v1/directives?wait=99" }, 400],
    ["metrics asked with an ingest token", { method: "GET", path: "/api/metrics" }, 401],
    ["metrics anonymously", { method: "GET", path: "/api/metrics", headers: { authorization: "" } }, 401],
    ["a foreign Host on a health check", { method: "GET", path: "/api/health", headers: { host: "evil.example:PORT" } }, 421],
  ])("%s", async (_name, call, status) => {
    const { lean, next } = await both(call);
    expect(comparable(lean)).toEqual(comparable(next));
    expect(lean.status).toBe(status);
    expect(lean.headers["content-type"]).toContain("application/problem+json");
    if (status === 413) expect(lean.headers.connection).toBe("close");
  });

  // An ASCII escape that does not decode, on a request with a body, escapes proxy.ts's matcher:
  // Next answers 500 while decoding the route's parameter; the listener refuses it as a bad path.
  it.each<[string, Call]>([
    ["a broken escape in a parameter", { method: "POST", path: "/api/v1/ingest/%zz", body: "{}" }],
    ["a broken escape in an acknowledgement", { method: "POST", path: "/api/v1/directives/%4/ack", body: '{"result":"acknowledged"}' }],
  ])("%s is a 400 before anything is decoded", async (_name, call) => {
    const { lean, next } = await both(call);
    expect(lean.status).toBe(400);
    expect(lean.headers["content-type"]).toContain("application/problem+json");
    expect(next.status).toBeGreaterThanOrEqual(400);
  });

  it("names where malformed JSON went wrong", async () => {
    const { lean } = await both({ method: "POST", path: "/api/v1/events", body: '{"threadId": "t-bad", "type": ' });
    expect(JSON.parse(lean.text).detail).toMatch(/JSON/);
  });

  it("accepts a good batch, a native capture line, OTLP and a long-poll", async () => {
    const batch = (id: string) => JSON.stringify([
      { threadId: id, type: "turn.started", turnId: "t1", agent: "codex", provider: "openai", model: "gpt-5.5" },
      { threadId: id, type: "retry", turnId: "t1", attempt: 1, maxAttempts: 5, error: { httpStatus: 429, message: "Rate limit reached." } },
    ]);
    const { lean: accepted } = await both({ method: "POST", path: "/api/v1/events", body: batch(thread("batch")) });
    expect(JSON.parse(accepted.text)).toMatchObject({ accepted: 2, rejected: [] });

    for (const call of [
      { method: "POST", path: "/api/v1/events", body: batch(thread("batch")) },
      { method: "POST", path: "/api/v1/ingest/codex-exec", headers: { "content-type": "application/x-ndjson" }, body: `${JSON.stringify({ type: "thread.started", thread_id: thread("native") })}\n` },
      { method: "POST", path: "/v1/logs", body: "{}" },
      { method: "GET", path: "/api/v1/directives?wait=0" },
    ] satisfies Call[]) {
      const { lean, next } = await both(call);
      expect(lean.status, call.path).toBe(200);
      expect(comparable(lean)).toEqual(comparable(next));
    }
  });
});

describe("the listener answers monitoring as Next does", () => {
  it("a health check, anonymously", async () => {
    const { lean, next } = await both({ method: "GET", path: "/api/health", headers: { authorization: "" } });
    expect(lean.status).toBe(200);
    expect(comparable(lean)).toEqual(comparable(next));
    expect(JSON.parse(lean.text)).toMatchObject({ status: "ok" });
  });

  it("a metrics scrape with an API key", async () => {
    const { lean, next } = await both({ method: "GET", path: "/api/metrics", headers: { authorization: `Bearer ${server.apiKey}` } });
    expect(lean.status, lean.text).toBe(200);
    // Each server has its own database (and next's key is not this one): only the shape is compared.
    expect(next.status).toBe(401);
    expect(lean.headers["content-type"]).toContain("text/plain");
    expect(lean.text).toMatch(/^# HELP radar_threads /m);
    const own = await send(nextServer, { method: "GET", path: "/api/metrics", headers: { authorization: `Bearer ${nextServer.apiKey}` } });
    expect(own.status).toBe(200);
    expect(own.headers["content-type"]).toBe(lean.headers["content-type"]);
    const names = (text: string) => text.split("\n").filter((line) => line.startsWith("# TYPE ")).sort();
    expect(names(lean.text)).toEqual(names(own.text));
  });
});

describe("the listener answers nothing before the boot is done", () => {
  // startServer returns at the first healthy answer, which the listener gives itself: by then the
  // store must be seeded (the admin and the token from the environment), as Next's answers wait for.
  it("the first healthy answer comes with the admin and the ingest token in place", async () => {
    const fresh = await startServer({ RADAR_ADMIN_EMAIL: "first@listener.test", RADAR_ADMIN_PASSWORD: "first-listener-password" });
    try {
      expect(await queryDatabase(fresh, `SELECT email FROM "User"`)).toEqual([{ email: "first@listener.test" }]);
      const sent = await send(fresh, { method: "POST", path: "/api/v1/events", body: JSON.stringify({ threadId: thread("first"), type: "turn.started" }) });
      expect(sent.headers["x-radar-listener"]).toBe("lean");
      expect(sent.status, sent.text).toBe(200);
    } finally {
      await fresh.stop();
    }
  });
});

describe("the listener shares Next's modules", () => {
  it("an event posted through the listener reaches a live stream served by Next", async () => {
    const id = thread("crossing");
    const gone = new AbortController();
    const stream = await server.fetch("/api/v1/stream", { signal: gone.signal });
    expect(stream.status).toBe(200);
    expect(stream.headers.get("x-radar-listener")).toBeNull();
    const reader = stream.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    const until = async (seen: () => boolean) => {
      const deadline = Date.now() + PATIENCE_MS;
      while (!seen()) {
        if (Date.now() > deadline) throw new Error(`the live stream did not say it; it said:\n${text}`);
        const { done, value } = await reader.read();
        if (done) throw new Error(`the live stream ended; it said:\n${text}`);
        text += decoder.decode(value, { stream: true });
      }
    };
    try {
      await until(() => text.includes("event: hello"));
      const sent = await send(server, { method: "POST", path: "/api/v1/events", body: JSON.stringify({ threadId: id, type: "turn.started", turnId: "t1" }) });
      expect(sent.headers["x-radar-listener"]).toBe("lean");
      expect(sent.status).toBe(200);
      const { key } = (await threadDetail(server, id)).thread;
      await until(() => text.split("\n").some((line) => line.startsWith("data: ") && line.includes(`"key":${key},`)));
    } finally {
      gone.abort();
      await reader.cancel().catch(() => undefined);
    }
  });

  it("writes through the listener and through Next interleave safely", async () => {
    // A relay that can interrupt, so an operator's stop has someone to reach.
    expect((await send(server, { method: "GET", path: "/api/v1/directives?wait=0&can=interrupt,continue" })).status).toBe(200);
    const ids = Array.from({ length: 12 }, (_, i) => thread(`interleave-${i}`));
    const retry = (id: string, attempt: number) => ({ threadId: id, type: "retry", turnId: "t1", attempt, maxAttempts: 9, error: { httpStatus: 429, message: "Rate limit reached." } });
    for (const id of ids) expect((await post(server, "/api/v1/events", [{ threadId: id, type: "turn.started", turnId: "t1" }, retry(id, 1)])).status).toBe(200);
    // Each thread: more retries through the listener while an operator stops it through Next.
    const answers = await Promise.all(
      ids.flatMap((id) => [
        send(server, { method: "POST", path: "/api/v1/events", body: JSON.stringify([retry(id, 2), retry(id, 3)]) }).then((answer) => answer.status),
        server.fetch(`/api/v1/threads/${id}/stop`, { method: "POST", body: JSON.stringify({ reason: "interleaving" }) }).then((answer) => answer.status),
      ]),
    );
    expect(answers.filter((status, i) => status !== (i % 2 === 0 ? 200 : 202))).toEqual([]);
    for (const id of ids) expect((await threadDetail(server, id)).thread.status, id).toBe("stopping");
  });
});
