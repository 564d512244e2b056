import { isMultipart } from "../server-action";

/**
 * The routes the ingestion listener serves itself instead of handing them to Next: what agents
 * and relays call many times a second, and what monitoring polls. Each names the built route
 * module Next would load for it (`.next/server/<module>/route.js`), so both run the very same
 * handler, on the same modules.
 */
export interface LeanRoute {
  method: "GET" | "POST";
  /** The app directory of the route, as Next builds it. */
  module: string;
  /** The path, with one `[name]` segment at most standing for a parameter. */
  path: string;
  /** Its answer is written as it streams (an export), not read whole first. */
  streamed?: boolean;
}

export const LEAN_ROUTES: readonly LeanRoute[] = [
  { method: "POST", path: "/api/v1/events", module: "app/api/v1/events" },
  { method: "POST", path: "/api/v1/ingest/[format]", module: "app/api/v1/ingest/[format]" },
  { method: "POST", path: "/v1/logs", module: "app/v1/logs" },
  { method: "POST", path: "/v1/traces", module: "app/v1/traces" },
  { method: "POST", path: "/v1/metrics", module: "app/v1/metrics" },
  { method: "GET", path: "/api/v1/directives", module: "app/api/v1/directives" },
  { method: "POST", path: "/api/v1/directives/[id]/ack", module: "app/api/v1/directives/[id]/ack" },
  // What a load balancer and Prometheus ask every few seconds, on this thread (they report its
  // state): through Next, each cost this thread about 5 ms more than its answer.
  { method: "GET", path: "/api/health", module: "app/api/health" },
  { method: "GET", path: "/api/metrics", module: "app/api/metrics" },
  // Exports: their bodies come gzipped from the read worker, which only an answer written here can
  // say (Next drops a route's Content-Encoding and compresses the body again). The audit export
  // before `[kind]`, which would match it too.
  { method: "GET", path: "/api/v1/exports/audit", module: "app/api/v1/exports/audit", streamed: true },
  { method: "GET", path: "/api/v1/exports/[kind]", module: "app/api/v1/exports/[kind]", streamed: true },
  { method: "GET", path: "/api/v1/threads/[id]/export", module: "app/api/v1/threads/[id]/export", streamed: true },
];

// A registered symbol: the listener and the route handlers are built separately, but share the process.
const LEAN_REQUEST = Symbol.for("radar.lean-request");

/** Marks a request the listener answers itself (serve.ts). */
export function markLean(request: Request): Request {
  (request as unknown as Record<symbol, true>)[LEAN_REQUEST] = true;
  return request;
}

// The body the listener read whole (node-http.ts readDeclaredBody), kept beside the request rather
// than given to it as a body: a Web Request wraps any body in a ReadableStream, and building and
// draining that stream cost a single-event POST more than its parsing.
const READ_BODY = Symbol.for("radar.lean-request-body");

/** Marks a request the listener answers itself, with the body it already read whole (if any). */
export function markLeanWithBody(request: Request, body: Buffer): Request {
  (request as unknown as Record<symbol, Buffer>)[READ_BODY] = body;
  return markLean(request);
}

/** The body the listener read whole for this request, or undefined: then it is the request's own body. */
export function bodyReadByListener(request: Request): Buffer | undefined {
  return (request as unknown as Record<symbol, Buffer | undefined>)[READ_BODY];
}

// And an answer's text (http.ts jsonAnswer), kept beside a bodiless Response for the listener to
// write (node-http.ts sendWebResponse): building a Response's body stream and reading it back
// cost a single-event POST as much again.
const ANSWER_TEXT = Symbol.for("radar.lean-answer-text");

/** `response` (bodiless) answering with `text`, which the listener writes as its body. */
export function withAnswerText(response: Response, text: string): Response {
  (response as unknown as Record<symbol, string>)[ANSWER_TEXT] = text;
  return response;
}

/** The text the listener writes as the body of `response`, or undefined: then it is the response's own body. */
export function answerTextOf(response: Response): string | undefined {
  return (response as unknown as Record<symbol, string | undefined>)[ANSWER_TEXT];
}

/** Whether the listener writes this request's answer, so a handler may send a body already encoded. */
export function answeredByListener(request: Request): boolean {
  return (request as unknown as Record<symbol, true | undefined>)[LEAN_REQUEST] === true;
}

/** A path Next normalises before routing it (a trailing slash, `//`, dot segments): Next redirects or answers it as it always has. */
const NEEDS_NORMALISING = /\/\/|\/\.\.?(\/|$)|.\/$/;

export interface LeanMatch {
  route: LeanRoute;
  /** Path parameters, still percent-encoded (the caller decodes them as Next would). */
  params: Record<string, string>;
}

/**
 * The lean route a request's method and raw path name, or null for Next. A path Next would
 * normalise first (a trailing slash, `//`, dot segments) is left to Next, which redirects or
 * answers it as it always has.
 */
export function matchLeanRoute(method: string, rawPath: string): LeanMatch | null {
  if (NEEDS_NORMALISING.test(rawPath)) return null;
  const segments = rawPath.split("/");
  for (const route of LEAN_ROUTES) {
    if (route.method !== method) continue;
    const params = matchPath(route.path, segments);
    if (params) return { route, params };
  }
  return null;
}

/**
 * Whether Next would run proxy.ts for this request (its `config.matcher`): API requests without
 * a body, those carrying a server action id or a multipart form, and /api/ paths with a non-ASCII escape. Other
 * requests with a body skip it there (their route wrapper checks the Host), and so they do here.
 */
export function passesProxy(rawPath: string, headers: { [name: string]: string | string[] | undefined }): boolean {
  if (headers["content-length"] === undefined && headers["transfer-encoding"] === undefined) return true;
  if (headers["next-action"] !== undefined) return true;
  if (isMultipart(typeof headers["content-type"] === "string" ? headers["content-type"] : undefined)) return true;
  return rawPath.startsWith("/api/") && /%[89a-fA-F]/.test(rawPath);
}

/** The parameters of `segments` (a raw path split at "/") under `pattern`, still percent-encoded; null when it does not match. */
function matchPath(pattern: string, segments: readonly string[]): Record<string, string> | null {
  const parts = pattern.split("/");
  if (parts.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const name = /^\[(\w+)\]$/.exec(parts[i])?.[1];
    if (name) params[name] = segments[i];
    else if (parts[i] !== segments[i]) return null;
  }
  return params;
}
