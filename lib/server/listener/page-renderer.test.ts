import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PATIENCE_MS } from "@/e2e/support/patience";
import { waitFor } from "@/e2e/support/relay-helpers";
import { PEER_HEADER } from "../edge";
import { RENDERER_HEADER, startPageRenderer, type PageRenderer, type RendererTiming } from "./page-renderer";

/**
 * The listener's side of the page renderer, against stand-ins for its thread (fixtures/): what
 * reaches the renderer, what comes back, and that a page is always answered — on the listener's
 * thread (`inline`) whenever the renderer cannot.
 */
const fixture = (name: string) => path.join(import.meta.dirname, "fixtures", name);
const PEER = "203.0.113.9";
const fronts: http.Server[] = [];
afterAll(() => Promise.all(fronts.map((front) => new Promise((resolve) => (front.closeAllConnections(), front.close(resolve))))));

/** A listener in front of `renderer`, as serve.ts is: every request forwarded, `inline` answering "inline". */
async function front(renderer: PageRenderer): Promise<string> {
  const server = http.createServer((incoming, outgoing) => renderer.forward(incoming, outgoing, PEER, () => outgoing.end("inline")));
  fronts.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The renderer of fixtures/`name`, started. */
function started(name: string, timing: Partial<RendererTiming> = {}): PageRenderer {
  const renderer = startPageRenderer(fixture(name), { hostname: "127.0.0.1", port: 3000 }, timing);
  expect(renderer).not.toBeNull();
  return renderer!;
}

const ready = (renderer: PageRenderer) => waitFor(() => renderer.ready(), PATIENCE_MS, () => "the renderer never became ready");

describe("the page renderer, seen from the listener", () => {
  it("renders inline while the renderer is starting", async () => {
    const renderer = started("unready-renderer.mjs");
    const url = await front(renderer);
    expect(await (await fetch(`${url}/page`)).text()).toBe("inline");
    expect(renderer.ready()).toBe(false);
  });

  it("forwards once the renderer is ready", async () => {
    const renderer = started("fake-renderer.mjs");
    const url = await front(renderer);
    await ready(renderer);
    const answer = await fetch(`${url}/page?q=1`);
    expect(await answer.text()).toBe("renderer GET /page?q=1");
    expect(answer.headers.get(RENDERER_HEADER)).toBe("worker");
  });

  it("forwards the request with the listener's record of the peer, and the answer as it came", async () => {
    const renderer = started("fake-renderer.mjs");
    const url = await front(renderer);
    await ready(renderer);
    const answer = await new Promise<http.IncomingMessage & { body: string }>((resolve, reject) => {
      const request = http.get(`${url}/echo`, { headers: { [PEER_HEADER]: "10.0.0.1", "x-custom": "kept", connection: "keep-alive, x-custom-hop", "x-custom-hop": "dropped" } }, (response) => {
        let body = "";
        response.setEncoding("utf8").on("data", (chunk) => (body += chunk)).on("end", () => resolve(Object.assign(response, { body })));
      });
      request.on("error", reject);
    });
    expect(answer.statusCode).toBe(201);
    expect(answer.statusMessage).toBe("Made");
    expect(answer.headers["set-cookie"]).toEqual(["a=1; Path=/", "b=2; Path=/"]);
    // The renderer's Keep-Alive is its connection's, not the client's.
    expect(answer.headers["keep-alive"]).not.toBe("timeout=77");
    const seen = JSON.parse(answer.body) as { headers: Record<string, string> };
    // Whatever the client claimed, the peer is who connected, as the listener recorded it.
    expect(seen.headers[PEER_HEADER]).toBe(PEER);
    expect(seen.headers["x-forwarded-for"]).toBe(PEER);
    expect(seen.headers["x-custom"]).toBe("kept");
    expect(seen.headers["x-custom-hop"]).toBeUndefined();
    expect(seen.headers.host).toBe(new URL(url).host);
  });

  it("a client that goes away ends the renderer's request too", async () => {
    const renderer = started("fake-renderer.mjs");
    const url = await front(renderer);
    await ready(renderer);
    const gone = new AbortController();
    const pending = fetch(`${url}/never`, { signal: gone.signal }).catch(() => "aborted");
    await new Promise((resolve) => setTimeout(resolve, 100));
    gone.abort();
    expect(await pending).toBe("aborted");
    await waitFor(async () => (await (await fetch(`${url}/cut`)).text()) === "1", PATIENCE_MS, () => "the renderer's request was never ended");
  });

  it("a renderer that stops mid-answer cuts that answer, renders inline meanwhile, and is restarted", async () => {
    const renderer = started("fake-renderer.mjs");
    const url = await front(renderer);
    await ready(renderer);
    // Begun by the renderer, so never taken for whole: the client sees the answer fail.
    await expect(fetch(`${url}/stop-mid-answer`).then((response) => response.text())).rejects.toThrow();
    await waitFor(() => !renderer.ready(), PATIENCE_MS, () => "the renderer's stop went unnoticed");
    expect(await (await fetch(`${url}/page`)).text()).toBe("inline");
    await ready(renderer);
    expect(await (await fetch(`${url}/page`)).text()).toBe("renderer GET /page");
  });

  it("a page the renderer does not begin to answer in time is a 504, not a render on the ingest thread", async () => {
    const renderer = started("fake-renderer.mjs", { answerMs: 200 });
    const url = await front(renderer);
    await ready(renderer);
    const answer = await fetch(`${url}/never`);
    expect(answer.status).toBe(504);
    expect(answer.headers.get("retry-after")).toBe("5");
    expect(await answer.text()).toMatch(/did not begin this page within 0.2 s/);
  });

  it("a renderer whose thread stops turning is ended and restarted", async () => {
    const renderer = started("fake-renderer.mjs", { heartbeatMs: 100, restartFirstMs: 50 });
    const url = await front(renderer);
    await ready(renderer);
    const life = async () => (await fetch(`${url}/life`)).text();
    const first = await life();
    // Its answer never comes; the client stops waiting.
    await fetch(`${url}/hang`, { signal: AbortSignal.timeout(500) }).catch(() => undefined);
    // Answered by another start of the renderer (meanwhile, pages render here).
    await waitFor(async () => {
      const now = await life();
      return now !== first && now !== "inline";
    }, PATIENCE_MS, () => "the stuck renderer was never restarted");
  });

  it("does not start where its socket's path would be too long, and pages render here", () => {
    const long = fs.mkdtempSync(path.join(os.tmpdir(), "radar-long-"));
    const deep = path.join(long, "a".repeat(60), "b".repeat(60));
    fs.mkdirSync(deep, { recursive: true });
    const tmpdir = process.env.TMPDIR;
    process.env.TMPDIR = deep;
    try {
      expect(startPageRenderer(fixture("fake-renderer.mjs"), { hostname: "127.0.0.1", port: 3000 })).toBeNull();
    } finally {
      if (tmpdir === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpdir;
      fs.rmSync(long, { recursive: true, force: true });
    }
  });

  it("a renderer that cannot start leaves every page to the listener's thread", async () => {
    const renderer = started("failing-renderer.mjs");
    const url = await front(renderer);
    for (let i = 0; i < 3; i++) expect(await (await fetch(`${url}/page`)).text()).toBe("inline");
    expect(renderer.ready()).toBe(false);
  });
});
