import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../support/server";

/**
 * The edge against the built server: the Host allow-list (fetch cannot set Host, so node:http),
 * the response headers and the pages' CSP nonce, what /api/health tells a stranger, server
 * actions from other origins, undecodable paths, and whose address a request counts as.
 */
const PUBLIC_HOST = "radar.example.com";
let server: RunningServer;
let port: number;

beforeAll(async () => {
  server = await startServer({ RADAR_PUBLIC_URL: `https://${PUBLIC_HOST}`, RADAR_STREAM_MAX_PER_CLIENT: "1" });
  port = Number(new URL(server.url).port);
});
afterAll(() => server?.stop());

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request with any headers (Host included), as the server's admin API key unless it sends its own authorization, read to its end. */
function request(pathname: string, { method = "GET", headers = {}, body }: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path: pathname, method, headers: { authorization: `Bearer ${server.apiKey}`, ...headers } }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const json = (answer: Answer) => JSON.parse(answer.body);

describe("the Host allow-list", () => {
  it.each(["evil.example", `evil.example:${0}`, `127.0.0.1:1`, `${PUBLIC_HOST}:8443`])("refuses Host %s with 421 naming it", async (template) => {
    const host = template.replace(":0", `:${port}`);
    for (const pathname of ["/", "/api/health", "/api/v1/threads"]) {
      const answer = await request(pathname, { headers: { host } });
      expect(answer.status, pathname).toBe(421);
      expect(answer.headers["content-type"]).toBe("application/problem+json");
      expect(json(answer).detail).toContain(JSON.stringify(host));
      expect(json(answer).detail).toContain("RADAR_PUBLIC_URL");
    }
  });

  it("refuses a foreign Host on a request with a body, which skips proxy.ts", async () => {
    const answer = await request("/api/v1/events", {
      method: "POST",
      headers: { host: `evil.example:${port}`, authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "turn.started", threadId: "edge-foreign", agent: "codex" }),
    });
    expect(answer.status).toBe(421);
  });

  it.each(["127.0.0.1:PORT", "localhost:PORT", "[::1]:PORT", "LocalHost:PORT", PUBLIC_HOST, `${PUBLIC_HOST}:443`])("accepts Host %s", async (template) => {
    const host = template.replace("PORT", String(port));
    expect((await request("/", { headers: { host } })).status).toBe(200);
    expect((await request("/api/health", { headers: { host } })).status).toBe(200);
  });
});

describe("response headers", () => {
  const common = { "x-frame-options": "DENY", "x-content-type-options": "nosniff", "referrer-policy": "no-referrer", "cross-origin-opener-policy": "same-origin" };

  it("a page carries them and a CSP whose nonce is fresh per load and on every script", async () => {
    const nonces: string[] = [];
    for (let load = 0; load < 2; load++) {
      const page = await request("/");
      expect(page.status).toBe(200);
      expect(page.headers).toMatchObject(common);
      const csp = String(page.headers["content-security-policy"]);
      for (const directive of ["frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'", "default-src 'self'"]) expect(csp).toContain(directive);
      const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
      expect(nonce).toBeTruthy();
      const scripts = [...page.body.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
      expect(scripts.length).toBeGreaterThan(0);
      for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`);
      nonces.push(nonce!);
    }
    expect(nonces[0]).not.toBe(nonces[1]);
  });

  it("API answers carry them, with and without a body", async () => {
    expect((await request("/api/v1/threads")).headers).toMatchObject(common);
    const ingest = await request("/api/v1/events", {
      method: "POST",
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "turn.started", threadId: "edge-headers", agent: "codex" }),
    });
    expect(ingest.status).toBe(200);
    expect(ingest.headers).toMatchObject(common);
  });
});

it("/api/health tells a stranger only its status and version", async () => {
  const answer = await request("/api/health");
  expect(answer.status).toBe(200);
  expect(json(answer)).toEqual({ status: "ok", version: expect.any(String) });
});

describe("server actions", () => {
  const manifest = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, "../../.next/server/server-reference-manifest.json"), "utf8"));
  const stopMatching = Object.entries(manifest.node as Record<string, { exportedName: string }>).find(([, entry]) => entry.exportedName === "stopMatching")![0];
  // A confirmed count that cannot match: an accepted call answers and stops nothing.
  const call = (headers: Record<string, string>) =>
    request("/", { method: "POST", headers: { "next-action": stopMatching, "content-type": "text/plain;charset=UTF-8", ...headers }, body: JSON.stringify([{ query: "", expected: 999_999 }]) });

  it("run from this server's own origin", async () => {
    const answer = await call({ origin: `http://127.0.0.1:${port}` });
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('"ok":false,"error":"The filter now matches');
  });

  it.each(["http://evil.example", `http://evil.example:${0}`, "null", `https://${PUBLIC_HOST}.evil.example`])("are refused from origin %s", async (template) => {
    const origin = template.replace(":0", `:${port}`);
    const answer = await call({ origin });
    expect(answer.status).toBe(403);
    expect(json(answer).detail).toContain("own pages");
  });

  // Next runs an action wherever it renders a page, its not-found page included; API requests with
  // a body otherwise skip proxy.ts, and the listener answers some of these paths itself.
  it.each(["/api/v1/events", "/api/v1/threads/edge-action/stop", "/api/nothing-here", "/v1/logs", "/v1/nothing-here", "/favicon.ico", "/_next/static/nothing-here.js"])(
    "are refused from another origin on %s too, body and all",
    async (pathname) => {
      const answer = await request(pathname, {
        method: "POST",
        headers: { "next-action": stopMatching, "content-type": "text/plain;charset=UTF-8", origin: "http://evil.example" },
        body: JSON.stringify([{ query: "", expected: 999_999 }]),
      });
      expect(answer.status).toBe(403);
      expect(json(answer).detail).toContain("own pages");
    },
  );

  it("are refused to a rebound DNS name (Origin and Host agree, on a foreign name)", async () => {
    const answer = await call({ host: `evil.example:${port}`, origin: `http://evil.example:${port}` });
    expect(answer.status).toBe(421);
  });
});

it.each([
  ["GET", "/api/v1/threads/%ED%A0%80"],
  ["GET", "/threads/%FF"],
  ["POST", "/api/v1/threads/%FF/stop"],
  ["POST", "/api/v1/ingest/%C0"],
  ["GET", "/api/v1/exports/%e2%82"],
])("%s %s (not UTF-8 once decoded) is a 400", async (method, pathname) => {
  const answer = await request(pathname, { method, body: method === "POST" ? "{}" : undefined, headers: method === "POST" ? { "content-type": "application/json" } : {} });
  expect(answer.status).toBe(400);
  expect(answer.headers["content-type"]).toBe("application/problem+json");
  expect(json(answer).detail).toBe("The path is not valid UTF-8 after percent-decoding.");
});

describe("whose address a request counts as", () => {
  /** Opens a live stream claiming `forwardedFor`; answers its status and a way to close it. */
  async function openStream(target: RunningServer, forwardedFor: string) {
    const controller = new AbortController();
    const response = await target.fetch(`${target.url}/api/v1/stream`, { headers: { "x-forwarded-for": forwardedFor, "x-radar-peer": forwardedFor }, signal: controller.signal });
    return { status: response.status, close: () => controller.abort() };
  }

  it("is the socket's, whatever X-Forwarded-For claims, when no proxy is trusted", async () => {
    const first = await openStream(server, "198.51.100.1");
    const second = await openStream(server, "198.51.100.2");
    expect([first.status, second.status]).toEqual([200, 429]);
    first.close();
    second.close();
  });

  it("is the one a trusted proxy forwarded", async () => {
    const behindProxy = await startServer({ RADAR_TRUST_PROXY: "loopback", RADAR_STREAM_MAX_PER_CLIENT: "1" });
    try {
      const first = await openStream(behindProxy, "198.51.100.1");
      const second = await openStream(behindProxy, "198.51.100.2");
      const again = await openStream(behindProxy, "198.51.100.2");
      expect([first.status, second.status, again.status]).toEqual([200, 200, 429]);
      for (const stream of [first, second, again]) stream.close();
    } finally {
      // A throwaway server: no graceful shutdown to wait for with streams just closed.
      await behindProxy.kill();
    }
  });
});
