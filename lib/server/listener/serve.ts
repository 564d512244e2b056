import http from "node:http";
import { config, ConfigError } from "@/lib/config";
import { edgeSettings, PEER_HEADER, refuseAtEdge, refuseMalformedPath } from "../edge";
import { whenBooted } from "../boot-signal";
import { acceptsGzip, problem } from "../http";
import { SECURITY_HEADERS } from "../security-headers";
import { runShutdownSteps } from "../shutdown";
import { failed, logFailure, readDeclaredBody, sendWebResponse, smallBodyLength, toWebRequest } from "./node-http";
import { LEAN_ROUTES, type LeanRoute } from "./route-table";
import { matchLeanRoute, passesProxy } from "./routes";

/**
 * The server `npm start` and the test server run: one Node HTTP listener on HOST:PORT in front
 * of Next. The ingestion routes (routes.ts) are answered here, by the very route handlers Next
 * would call, without Next's per-request work (routing, its request wrappers, response
 * rewriting), which costs several times what a single-event POST itself does; everything else is
 * Next's request handler, exactly as `next start` serves it.
 *
 * The handlers are the route files' own exports, bundled into the listener (route-table.ts); Next
 * is used only through `next()`, `prepare()` and `getRequestHandler()`. The bundle holds its own
 * copy of lib/, beside Next's: what both must share lives in lib/server/process-state.ts. Pages
 * render on this same event loop: one Next per process.
 */

const RESPONSE_HEADER = "x-radar-listener";
/** What every lean answer carries besides the handler's own headers: the pages' security headers, and who answered. */
const LEAN_HEADERS: ReadonlyArray<readonly [string, string]> = [...SECURITY_HEADERS, [RESPONSE_HEADER, "lean"]];
const HEADERS_TIMEOUT_MS = 20_000;
const REQUEST_TIMEOUT_MS = 120_000;
/** How long a stopping server waits for the answers under way. */
const DRAIN_MS = 2_000;

export async function serve(root: string): Promise<void> {
  let settings: ReturnType<typeof config>;
  try {
    settings = config();
  } catch (error) {
    process.stderr.write(`[radar] ${error instanceof ConfigError ? error.message : String(error)}\n`);
    process.exit(1);
  }
  const { HOST: hostname, PORT: port, RADAR_INGEST_LISTENER: listener } = settings;
  // As `next start` does: Next and React pick their production builds by it.
  (process.env as Record<string, string | undefined>).NODE_ENV ||= "production";
  const { default: next } = await import("next");
  const app = next({ dev: false, dir: root, hostname, port });
  await app.prepare();
  const handleNext = app.getRequestHandler();
  // Next's prepare starts instrumentation.ts's boot (the store opened, migrated and seeded, the
  // watchdog caught up) without waiting for it; only Next's own handler waits. Nothing is served
  // before it is done: a lean route would otherwise reach a store not yet seeded.
  await whenBooted();
  // Only the path and query of a handler's request URL are ever read; the Host header is checked on its own.
  const origin = `http://127.0.0.1:${port}`;

  const server = http.createServer((incoming, outgoing) => {
    const raw = incoming.url ?? "/";
    const query = raw.indexOf("?");
    const rawPath = query === -1 ? raw : raw.slice(0, query);
    const peer = incoming.socket.remoteAddress ?? "";
    const match = listener !== "next" && raw.startsWith("/") ? matchLeanRoute(LEAN_ROUTES, incoming.method ?? "GET", rawPath) : null;
    if (!match) {
      // For Next's routes too (they see only headers; Next fills X-Forwarded-For from the socket
      // only when the client sent none), replacing whatever a client sent.
      incoming.headers[PEER_HEADER] = peer;
      // As `next start` does around the same call: a failure is logged and answered 500.
      handleNext(incoming, outgoing).catch((error: unknown) => failed(error, incoming, outgoing, rawPath));
      return;
    }
    answer(match.route, match.params, incoming, outgoing, origin + raw, rawPath, peer).catch((error: unknown) => failed(error, incoming, outgoing, rawPath));
  });
  // A client that trickles its headers or body is cut off; a long-poll waits for its answer, not
  // for the request, so it is unaffected.
  server.headersTimeout = HEADERS_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  server.listen(port, hostname, () => {
    const address = `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
    process.stdout.write(`[radar] Ready in ${Math.round(process.uptime() * 1000)} ms, listening on ${address}\n`);
  });
  server.on("error", (error) => {
    process.stderr.write(`[radar] cannot listen on ${hostname}:${port}: ${error.message}\n`);
    process.exit(1);
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      // Requests under way (an ingest batch takes milliseconds) get their answers; idle
      // connections and parked long-polls are not waited for (a relay polls again). Meanwhile
      // this instance lets go of what it holds for the others (the watchdog's leadership), so a
      // standby takes over now rather than after its lease; the exit waits for both.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      void Promise.all([closed, runShutdownSteps()]).then(() => process.exit(0));
      setTimeout(() => process.exit(0), DRAIN_MS).unref();
    });
  }
}

async function answer(
  route: LeanRoute,
  rawParams: Record<string, string>,
  incoming: http.IncomingMessage,
  outgoing: http.ServerResponse,
  url: string,
  rawPath: string,
  peer: string,
): Promise<void> {
  const gone = new AbortController();
  outgoing.once("close", () => {
    if (!outgoing.writableFinished) gone.abort();
  });
  const small = smallBodyLength(incoming);
  let body: Buffer | undefined;
  if (small !== null) {
    try {
      body = await readDeclaredBody(incoming, small);
    } catch {
      // Gone, or more than it declared: nobody to answer.
      outgoing.destroy();
      return;
    }
  }
  let response: Response;
  try {
    const request = toWebRequest(incoming, url, gone.signal, peer, body);
    // proxy.ts's checks, on the requests Next would have run it for; an undecodable path is
    // refused on every lean route, as Next refuses it before decoding a route's parameters.
    const refused = passesProxy(rawPath, incoming.headers) ? refuseAtEdge(request, edgeSettings()) : refuseMalformedPath(rawPath);
    response = refused ?? (await route.handler(request, { params: Promise.resolve(decodeParams(rawParams)) }));
  } catch (error) {
    // What Next does with a handler that throws: log it, answer 500.
    logFailure(error, incoming, rawPath);
    response = problem(500, "Internal Server Error", "The server failed to answer this request; it has been logged.");
  }
  // Added while writing, never set on the handler's Response (whose headers may be immutable).
  await sendWebResponse(response, outgoing, LEAN_HEADERS, {
    streamed: route.streamed,
    encoding: acceptsGzip(incoming.headers["accept-encoding"] ?? null) ? "gzip" : "identity",
  });
}

/** Path parameters as Next hands them to a route: percent-decoded (undecodable paths were refused above). */
function decodeParams(raw: Record<string, string>): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) params[name] = decodeURIComponent(value);
  return params;
}
