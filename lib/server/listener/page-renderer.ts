import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { pipeline } from "node:stream";
import { Worker } from "node:worker_threads";
import { PEER_HEADER } from "../edge";
import type { RestartTiming } from "./restarts";
import { PAGE_RENDERER_ROLE, type PageRendererData, type RendererMessage } from "./role";
import { supervise } from "./supervised-worker";

/**
 * The listener's side of the page renderer (render-pages.ts): a worker thread running a second
 * Next that renders the pages, so a page's render (tens of milliseconds of React on a busy
 * thread page) never holds the thread that takes and ingests events. A page request is
 * forwarded to it over a Unix socket and its answer streamed back unchanged. While the renderer
 * is starting, restarting after a crash, or failed before answering, the page is rendered on the
 * listener's thread instead (`inline`), as it was before the renderer existed: never refused.
 * A renderer that is only slow (answerMs) gets a 504, not a second render on the ingest thread.
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

export interface RendererTiming extends RestartTiming {
  /** How often the renderer is asked whether its thread still turns; silent for three asks, it is ended and restarted. */
  heartbeatMs: number;
  /** How long a page may take to begin its answer on the renderer before the client is told so (504). */
  answerMs: number;
}

const TIMING: RendererTiming = { restartFirstMs: 1_000, restartLastMs: 60_000, healthyMs: 60_000, heartbeatMs: 5_000, answerMs: 30_000 };
/** A Unix socket's path is at most this long (sockaddr_un, with its terminating NUL). */
const SOCKET_PATH_MAX = 107;
/** A renderer that runs out of memory ends alone, not with the whole server. */
const RENDERER_HEAP_MB = 1_024;

/** Starts the renderer from `bundle` (the server's bundle: main.ts runs it as the renderer); null when it cannot run here. */
export function startPageRenderer(bundle: string, { hostname, port }: { hostname: string; port: number }, timing: Partial<RendererTiming> = {}): PageRenderer | null {
  const { heartbeatMs, answerMs, ...restartTiming } = { ...TIMING, ...timing };
  // Created 0700: only this user reaches the socket, so nobody can send the renderer a request
  // with a peer address (PEER_HEADER) of their choosing.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-pages-"));
  const socketPath = path.join(dir, "pages.sock");
  if (Buffer.byteLength(socketPath) > SOCKET_PATH_MAX) {
    fs.rmSync(dir, { recursive: true, force: true });
    process.stderr.write(`[radar] pages render on the ingest thread: the page renderer's socket path would be too long (${socketPath}); set TMPDIR to a shorter folder\n`);
    return null;
  }
  process.once("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  const agent = new http.Agent({ keepAlive: true });
  // A thread stuck in a render answers nothing, pages included: ended, it is restarted. (Not
  // while it starts: until it is ready, pages render here anyway.)
  const renderer = supervise<RendererMessage>(
    {
      name: "the page renderer",
      meanwhile: "pages render on the ingest thread",
      start: () => {
        const data: PageRendererData = { role: PAGE_RENDERER_ROLE, socketPath, hostname, port };
        return new Worker(bundle, { workerData: data, resourceLimits: { maxOldGenerationSizeMb: RENDERER_HEAP_MB } });
      },
      isReady: (message) => message?.ready === true,
      onWatch: (worker) => worker.postMessage({ ping: true } satisfies RendererMessage),
    },
    { ...restartTiming, watchMs: heartbeatMs, silentMs: 3 * heartbeatMs },
  );

  return {
    ready: () => renderer.isUp(),
    forward(incoming, outgoing, peer, inline) {
      if (!renderer.isUp()) return inline();
      const upstream = http.request({
        socketPath,
        agent,
        method: incoming.method,
        path: incoming.url,
        headers: forwardedHeaders(incoming, peer),
        // The client's Host, or none, exactly as it came: the renderer checks it as the listener's Next would.
        setHost: false,
      });
      let late = false;
      const slow = setTimeout(() => {
        late = true;
        upstream.destroy();
      }, answerMs);
      upstream.once("response", (answer) => {
        clearTimeout(slow);
        outgoing.writeHead(answer.statusCode ?? 502, answer.statusMessage, [...answerHeaders(answer.rawHeaders), RENDERER_HEADER, "worker"]);
        pipeline(answer, outgoing, () => undefined);
      });
      upstream.on("error", () => {
        clearTimeout(slow);
        // Nothing sent yet: the page is a GET, rendering it here is safe — unless the renderer was
        // only slow, when rendering it here would hold the ingest thread for as long. Once the
        // answer began, it is cut.
        if (outgoing.headersSent || outgoing.destroyed) outgoing.destroy();
        else if (late) {
          outgoing.writeHead(504, { "content-type": "text/plain; charset=utf-8", "retry-after": "5" });
          outgoing.end(`The page renderer did not begin this page within ${answerMs / 1000} s. Try again in a moment.\n`);
        } else inline();
      });
      outgoing.once("close", () => {
        if (!outgoing.writableFinished) upstream.destroy();
      });
      upstream.end();
    },
  };
}

/**
 * The request's headers for the renderer: without the connection's own (Host is never one), with
 * the listener's record of who connected, and the X-Forwarded-For Next would have filled from the
 * socket (the renderer's socket has no address).
 */
function forwardedHeaders(incoming: http.IncomingMessage, peer: string): http.OutgoingHttpHeaders {
  const named = new Set(String(incoming.headers.connection ?? "").toLowerCase().split(",").map((name) => name.trim()));
  named.delete("host");
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
