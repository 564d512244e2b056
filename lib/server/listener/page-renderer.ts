import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { pipeline } from "node:stream";
import { Worker } from "node:worker_threads";
import { PEER_HEADER } from "../edge";
import { PAGE_RENDERER_ROLE, type PageRendererData } from "./role";

/**
 * The listener's side of the page renderer (render-pages.ts): a worker thread running a second
 * Next that renders the pages, so a page's render (tens of milliseconds of React on a busy
 * thread page) never holds the thread that takes and ingests events. A page request is
 * forwarded to it over a Unix socket and its answer streamed back unchanged. While the renderer
 * is starting, restarting after a crash, or failed before answering, the page is rendered on the
 * listener's thread instead (`inline`), as it was before the renderer existed: never refused.
 */
export interface PageRenderer {
  /** Answers a page request (routes.ts forRenderer) on the renderer, or runs `inline` when it cannot. */
  forward(incoming: http.IncomingMessage, outgoing: http.ServerResponse, peer: string, inline: () => void): void;
  /** Whether the renderer is up and answering. */
  ready(): boolean;
}

/** Every answer the renderer wrote carries it: who rendered the page. */
export const RENDERER_HEADER = "x-radar-renderer";

/** A connection's own headers (RFC 9110 §7.6.1), never forwarded from one to the other. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"]);
/** The wait before restarting a renderer that stopped: doubling from the first to the last. */
const RESTART_FIRST_MS = 1_000;
const RESTART_LAST_MS = 60_000;
/** A renderer that served this long before it stopped is restarted as if it had never failed. */
const HEALTHY_MS = 60_000;

export function startPageRenderer(bundle: string, { hostname, port }: { hostname: string; port: number }): PageRenderer {
  // Created 0700: only this user reaches the socket, so nobody can send the renderer a request
  // with a peer address (PEER_HEADER) of their choosing.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-pages-"));
  const socketPath = path.join(dir, "pages.sock");
  process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  const agent = new http.Agent({ keepAlive: true });
  let readyAt: number | null = null;
  let failures = 0;

  const start = () => {
    const data: PageRendererData = { role: PAGE_RENDERER_ROLE, socketPath, hostname, port };
    const worker = new Worker(bundle, { workerData: data });
    worker.on("message", (message: { ready?: boolean }) => {
      if (message?.ready) readyAt = Date.now();
    });
    worker.on("error", (error) => process.stderr.write(`[radar] the page renderer failed: ${error.stack ?? error.message}\n`));
    worker.once("exit", (code) => {
      if (readyAt !== null && Date.now() - readyAt >= HEALTHY_MS) failures = 0;
      readyAt = null;
      const wait = Math.min(RESTART_LAST_MS, RESTART_FIRST_MS * 2 ** failures++);
      process.stderr.write(`[radar] the page renderer stopped (exit code ${code}): pages render on the ingest thread until it restarts in ${wait / 1000} s\n`);
      setTimeout(start, wait).unref();
    });
    // The listener's server keeps the process; the renderer never does on its own.
    worker.unref();
  };
  start();

  return {
    ready: () => readyAt !== null,
    forward(incoming, outgoing, peer, inline) {
      if (readyAt === null) return inline();
      const upstream = http.request({ socketPath, agent, method: incoming.method, path: incoming.url, headers: forwardedHeaders(incoming, peer) });
      upstream.once("response", (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.statusMessage, [...answerHeaders(answer.rawHeaders), RENDERER_HEADER, "worker"]);
        pipeline(answer, outgoing, () => undefined);
      });
      upstream.once("error", () => {
        // Nothing sent yet: the page is a GET, rendering it here is safe. Once the answer began, it is cut.
        if (outgoing.headersSent || outgoing.destroyed) outgoing.destroy();
        else inline();
      });
      outgoing.once("close", () => {
        if (!outgoing.writableFinished) upstream.destroy();
      });
      upstream.end();
    },
  };
}

/**
 * The request's headers for the renderer: without the connection's own, with the listener's
 * record of who connected, and the X-Forwarded-For Next would have filled from the socket (the
 * renderer's socket has no address).
 */
function forwardedHeaders(incoming: http.IncomingMessage, peer: string): http.OutgoingHttpHeaders {
  const named = new Set(String(incoming.headers.connection ?? "").toLowerCase().split(",").map((name) => name.trim()));
  const headers: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name) && !named.has(name)) headers[name] = value;
  }
  headers[PEER_HEADER] = peer;
  headers["x-forwarded-for"] ??= peer;
  return headers;
}

/** The renderer's answer headers as they came (names, order, repeated Set-Cookie), without the connection's own. */
function answerHeaders(raw: string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (!HOP_BY_HOP.has(raw[i].toLowerCase())) kept.push(raw[i], raw[i + 1]);
  return kept;
}
