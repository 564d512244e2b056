import { promisify } from "node:util";
import { gunzip } from "node:zlib";
import { within } from "@/lib/within";

const gunzipAsync = promisify(gunzip);
const INFLATE_CHUNK_BYTES = 1024 * 1024;

/** RFC 9457 problem details: every error a client gets says what was wrong and where. */
export function problem(status: number, title: string, detail: string, extra: Record<string, unknown> = {}): Response {
  return new Response(JSON.stringify({ type: "about:blank", title, status, detail, ...extra }), {
    status,
    headers: { "content-type": "application/problem+json" },
  });
}

/**
 * Whether an Accept-Encoding header takes gzip: named (or `*`) with a quality above zero, unless
 * gzip itself is named with quality zero.
 */
export function acceptsGzip(header: string | null): boolean {
  const quality = new Map<string, number>();
  for (const part of (header ?? "").split(",")) {
    const [name, ...params] = part.split(";").map((item) => item.trim().toLowerCase());
    if (!name) continue;
    const q = params.find((param) => param.startsWith("q="));
    quality.set(name, q === undefined ? 1 : Number(q.slice(2)) || 0);
  }
  return (quality.get("gzip") ?? quality.get("x-gzip") ?? quality.get("*") ?? 0) > 0;
}

/** Small JSON commands (a stop, a directive acknowledgement) need no more than this. */
export const MAX_COMMAND_BYTES = 64 * 1024;

export class BodyTooLargeError extends Error {}

/** A body in a content encoding the route does not take, or one that does not decode. */
export class BodyEncodingError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 415,
  ) {
    super(message);
  }
}

/**
 * Reads a request body as text, refusing it as soon as it passes `limit` bytes: a declared
 * length over the limit is refused unread, a body streamed without one is cut off at the limit.
 */
export async function readBodyText(request: Request, limit: number, options: { gzip?: boolean } = {}): Promise<string> {
  return (await readBody(request, limit, options)).toString("utf8");
}

/**
 * readBodyText's bytes, for binary formats (OTLP protobuf). A route that takes gzip (`options.gzip`)
 * gets the body decompressed within the same `limit`, so a small bomb cannot take more memory or
 * work than a large body; any other route refuses a content encoding (415) rather than reading
 * compressed bytes as text.
 */
export async function readBody(request: Request, limit: number, options: { gzip?: boolean } = {}): Promise<Buffer> {
  const encoding = (request.headers.get("content-encoding") ?? "identity").trim().toLowerCase();
  if (encoding !== "identity" && !(options.gzip && encoding === "gzip")) {
    throw new BodyEncodingError(`Content-Encoding "${encoding}" is not accepted here; send ${options.gzip ? "gzip or no encoding" : "the body without a content encoding"}.`, 415);
  }
  const bytes = await readBodyBytes(request, limit);
  if (encoding !== "gzip") return bytes;
  try {
    // Inflated by zlib off the event loop (its own thread pool), which keeps serving meanwhile;
    // in large pieces, so that the event loop joins them a few times rather than hundreds.
    return await gunzipAsync(bytes, { maxOutputLength: limit, chunkSize: INFLATE_CHUNK_BYTES });
  } catch (error) {
    if ((error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE" || error instanceof RangeError) throw new BodyTooLargeError();
    throw new BodyEncodingError(`The gzip body does not decompress: ${(error as Error).message}`, 400);
  }
}

async function readBodyBytes(request: Request, limit: number): Promise<Buffer> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > limit) {
    // The whole declared body, up to what a body read to its limit may still discard: a budget
    // of `limit` left the rest of a body just over it unread, and the client's write reset.
    if (request.body) await discardRest(request.body.getReader(), Math.min(declared, 2 * limit));
    throw new BodyTooLargeError();
  }
  if (!request.body) return Buffer.alloc(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await discardRest(reader, limit);
      throw new BodyTooLargeError();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** How long a refused body may keep arriving before the connection is dropped anyway. */
const DISCARD_WITHIN_MS = 10_000;

/**
 * A refused body is read on and dropped, up to `budget` more bytes or DISCARD_WITHIN_MS, before
 * the refusal goes out: the 413 closes the connection, and closing while the client still writes
 * resets it (EPIPE) before the client reads the answer. Nothing is kept; past either bound the
 * connection is dropped.
 */
async function discardRest(reader: ReadableStreamDefaultReader<Uint8Array>, budget: number): Promise<void> {
  const drained = (async () => {
    let left = budget;
    while (left > 0) {
      const { done, value } = await reader.read();
      if (done) return;
      left -= value.byteLength;
    }
  })();
  try {
    await within(drained, DISCARD_WITHIN_MS);
  } catch {
    // the client went away: nothing to drop
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

export class BodyParseError extends Error {}

/**
 * The one way a JSON body is read: streamed within `limit`, then parsed. An empty body is
 * `emptyAs` when given (a command whose fields are all optional), else unparseable.
 */
export async function readJsonBody(request: Request, limit: number, emptyAs?: unknown): Promise<unknown> {
  const text = await readBodyText(request, limit);
  if (!text.trim()) {
    if (emptyAs !== undefined) return emptyAs;
    throw new BodyParseError("empty body");
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new BodyParseError((error as Error).message);
  }
}

/**
 * Operator actions over plain HTTP must come from this server's own pages or from a non-browser
 * client: a page on another site could otherwise make a browser POST a stop to 127.0.0.1.
 * Returns a 403 problem for a cross-site browser request, else null.
 */
export function refuseCrossSite(request: Request): Response | null {
  const site = request.headers.get("sec-fetch-site");
  const origin = request.headers.get("origin");
  const host = request.headers.get("host");
  const crossSite = (site !== null && site !== "same-origin" && site !== "none") || (origin !== null && host !== null && hostOf(origin) !== host);
  return crossSite ? problem(403, "Forbidden", "Operator actions are accepted only from this server's own pages or from non-browser clients.") : null;
}

function hostOf(origin: string): string | null {
  try {
    return new URL(origin).host;
  } catch {
    return null; // "null" (a sandboxed page) or garbage: not this server
  }
}

/** Adds the advice a refused client should follow (429, 503, 507): seconds until it may try again. */
/**
 * For a refusal sent before the request body was read to its end: the connection closes after
 * the response, so a client that keeps connections alive opens a fresh one for its next request
 * instead of reusing a socket that still carries the rest of the refused body (a reset).
 */
export function closingConnection(response: Response): Response {
  response.headers.set("connection", "close");
  return response;
}

export function withRetryAfter(response: Response, seconds: number): Response {
  response.headers.set("retry-after", String(seconds));
  return response;
}
