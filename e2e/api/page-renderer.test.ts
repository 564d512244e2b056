import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PATIENCE_MS } from "../support/patience";
import { waitFor } from "../support/relay-helpers";
import { post, startServer, type RunningServer } from "../support/server";

/**
 * The pages, and the API reads they make, are rendered on the page renderer's thread
 * (lib/server/listener/page-renderer.ts), never on the one that ingests: its answers say so
 * (`X-Radar-Renderer: worker`). Each is the answer the listener's own Next gives
 * (`inlineServer`, RADAR_PAGE_RENDERER=inline), and it sees at once what was just ingested.
 */
let server: RunningServer;
let inlineServer: RunningServer;
const RENDERER = "x-radar-renderer";

beforeAll(async () => {
  [server, inlineServer] = await Promise.all([startServer(), startServer({ RADAR_PAGE_RENDERER: "inline" })]);
  // The renderer starts after the server answers: pages render on the ingest thread until then.
  await waitFor(async () => (await fetch(`${server.url}/sign-in`)).headers.get(RENDERER) === "worker", PATIENCE_MS, () => "the page renderer never answered");
});
afterAll(() => Promise.all([server?.stop(), inlineServer?.stop()]));

const plain = (on: RunningServer, pathname: string) => fetch(`${on.url}${pathname}`, { redirect: "manual" });

describe("the page renderer", () => {
  it("renders the pages as the listener's Next does", async () => {
    for (const pathname of ["/sign-in", "/", "/threads/nobody", "/insights?range=7d"]) {
      const [rendered, inline] = await Promise.all([plain(server, pathname), plain(inlineServer, pathname)]);
      expect(rendered.headers.get(RENDERER), pathname).toBe("worker");
      expect(inline.headers.get(RENDERER), pathname).toBeNull();
      expect(rendered.status, pathname).toBe(inline.status);
      expect(rendered.headers.get("location"), pathname).toBe(inline.headers.get("location"));
      expect(rendered.headers.get("content-security-policy"), pathname).toMatch(/script-src 'self' 'nonce-/);
      await Promise.all([rendered.text(), inline.text()]);
    }
    // The sign-in page itself, whole, and the script it loads.
    const page = await (await plain(server, "/sign-in")).text();
    expect(page).toContain("Sign in");
    const script = /src="(\/_next\/static\/[^"]+\.js)"/.exec(page)?.[1];
    expect(script).toBeDefined();
    const asset = await plain(server, script!);
    expect(asset.status).toBe(200);
    expect(asset.headers.get(RENDERER)).toBe("worker");
  });

  it("answers the board's reads, and sees an event the moment its POST was answered", async () => {
    const id = `rendered-${Date.now()}`;
    const sent = await post(server, "/api/v1/events", { threadId: id, type: "retry", turnId: "t1", attempt: 1, maxAttempts: 5, error: { httpStatus: 429 } });
    expect(sent.status).toBe(200);
    const detail = await server.fetch(`/api/v1/threads/${id}`);
    expect(detail.headers.get(RENDERER)).toBe("worker");
    expect(detail.status).toBe(200);
    const { thread } = (await detail.json()) as { thread: { key: number; status: string } };
    expect(thread.status).toBe("retrying");
    const rows = await server.fetch(`/api/v1/threads?keys=${thread.key}`);
    expect(rows.headers.get(RENDERER)).toBe("worker");
    expect(JSON.stringify(await rows.json())).toContain(id);
    // A viewer's read without a credential is refused there as everywhere.
    const anonymous = await fetch(`${server.url}/api/v1/threads`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get(RENDERER)).toBe("worker");
  });

  it("leaves ingestion, the live stream, health and writes to the listener's thread", async () => {
    const sent = await fetch(`${server.url}/api/v1/events`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
      body: JSON.stringify({ threadId: "lean-1", type: "turn.started", turnId: "t1" }),
    });
    expect(sent.headers.get(RENDERER)).toBeNull();
    expect(sent.headers.get("x-radar-listener")).toBe("lean");
    for (const pathname of ["/api/health", "/%61pi/health"]) {
      const health = await fetch(`${server.url}${pathname}`);
      expect(health.headers.get(RENDERER), pathname).toBeNull();
      await health.text();
    }
    const gone = new AbortController();
    const stream = await server.fetch("/api/v1/stream", { signal: gone.signal });
    expect(stream.status).toBe(200);
    expect(stream.headers.get(RENDERER)).toBeNull();
    gone.abort();
    await stream.body?.cancel().catch(() => undefined);
  });
});
