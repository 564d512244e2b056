import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { PEER_HEADER } from "../edge";

/**
 * Up to this many bytes, a body whose length is declared is read whole before the handler runs
 * (readDeclaredBody): what agents send many times a second (one event, a directive's ack) arrives
 * in a chunk or two, and bridging those through a web stream costs more than copying them. No
 * lean route accepts less, so the handler's size limit still decides every larger declared length.
 */
const SMALL_BODY_BYTES = 64 * 1024;

/**
 * The declared length of a request's body when it is small enough to be read whole first
 * (SMALL_BODY_BYTES), else null: no body, no Content-Length (a chunked body), or a larger one,
 * which streams to the handler so a route's size limit refuses it as it arrives.
 */
export function smallBodyLength(incoming: IncomingMessage): number | null {
  const method = incoming.method ?? "GET";
  if (method === "GET" || method === "HEAD" || incoming.headers["transfer-encoding"] !== undefined) return null;
  const declared = incoming.headers["content-length"];
  if (declared === undefined || !/^\d+$/.test(declared)) return null;
  const length = Number(declared);
  return length <= SMALL_BODY_BYTES ? length : null;
}

/**
 * The whole body of a request that declared `length` bytes, in one Buffer. Never holds more than
 * `length` bytes; rejects when more arrive or the client goes away before the end.
 */
export function readDeclaredBody(incoming: IncomingMessage, length: number): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (error: Error | null) => {
      incoming.off("data", onData).off("end", onEnd).off("error", done).off("close", onClose);
      if (error) reject(error);
      else resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > length) {
        incoming.pause();
        done(new Error(`the body is longer than its declared ${length} bytes`));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => done(size === length ? null : new Error(`the body ended after ${size} of its declared ${length} bytes`));
    const onClose = () => done(new Error("the client went away before the body's end"));
    incoming.on("data", onData).once("end", onEnd).once("error", done).once("close", onClose);
  });
}

/**
 * Node's request as the Web Request a route handler takes, and its Response back onto Node's
 * socket: the body, when it was read whole (readDeclaredBody), as the request's body, else streamed without a
 * copy (so a route's size limit still refuses an oversized one as it arrives), the socket's own
 * address in PEER_HEADER, an AbortSignal that fires when the client goes away (a directive
 * long-poll stops waiting; a request whose body was read whole has none).
 */
export function toWebRequest(incoming: IncomingMessage, url: string, signal: AbortSignal, peer: string, body?: Buffer): Request {
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
  // The socket's address, never what a client claims under the same name.
  headers.set(PEER_HEADER, peer);
  const method = incoming.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  // Without the signal too: following one costs undici a listener and an AbortController per
  // request, and only a long-poll (a GET, whose body is never read whole) waits on its client.
  if (body) return new Request(url, { method, headers, body: body as Uint8Array<ArrayBuffer> });
  return new Request(url, {
    method,
    headers,
    signal,
    ...(hasBody ? { body: Readable.toWeb(incoming) as ReadableStream<Uint8Array>, duplex: "half" } : {}),
  } as RequestInit);
}

/** Set here, never copied from a handler's headers: a second framing would let a proxy read two responses. */
const FRAMING_HEADERS = new Set(["set-cookie", "content-length", "transfer-encoding", "keep-alive"]);
const BODILESS_STATUSES = new Set([204, 304]);

/**
 * Writes a handler's Response: status, headers (each Set-Cookie on its own) and the body in one
 * write with its length. Most of the listener's routes answer small JSON documents, so the body is
 * read whole first: one write instead of a chunked stream's several. With `streamed` (an export:
 * any size), the body is written chunk by chunk as it comes, at the pace the client reads it.
 * `extra` headers are added over the handler's own. A streamed body given an `encoding` (what the
 * client's Accept-Encoding takes) is gzipped as it goes when that says gzip, by zlib off the event
 * loop, as Next compresses what it serves.
 */
export async function sendWebResponse(
  response: Response,
  outgoing: ServerResponse,
  extra: ReadonlyArray<readonly [string, string]> = [],
  { streamed = false, encoding }: { streamed?: boolean; encoding?: "gzip" | "identity" } = {},
): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (!FRAMING_HEADERS.has(name)) headers[name] = value;
  });
  for (const [name, value] of extra) headers[name.toLowerCase()] = value;
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
  if (streamed && response.body && !BODILESS_STATUSES.has(response.status)) {
    let stream: ReadableStream<Uint8Array> = response.body;
    if (encoding && headers["content-encoding"] === undefined) {
      // Either encoding may come from here, by the request's Accept-Encoding: caches must tell them apart.
      headers.vary = headers.vary ? `${headers.vary}, accept-encoding` : "accept-encoding";
      if (encoding === "gzip") {
        headers["content-encoding"] = "gzip";
        stream = stream.pipeThrough(new CompressionStream("gzip") as unknown as TransformStream<Uint8Array, Uint8Array>);
      }
    }
    outgoing.writeHead(response.status, response.statusText || undefined, headers);
    await writeStream(stream, outgoing);
    return;
  }
  let body: Buffer;
  try {
    body = response.body ? Buffer.from(await response.arrayBuffer()) : Buffer.alloc(0);
  } catch {
    outgoing.destroy();
    return;
  }
  if (BODILESS_STATUSES.has(response.status)) body = Buffer.alloc(0);
  else headers["content-length"] = String(body.byteLength);
  outgoing.writeHead(response.status, response.statusText || undefined, headers);
  outgoing.end(body);
}

/**
 * How long a streamed export waits for a client that stopped reading (no drain) before it gives
 * up: the body is cancelled, so the read worker producing it lets go, and the answer is cut.
 */
export const STALLED_CLIENT_MS = 60_000;

/** Resolves true once the socket drains, false when it closes or stays full for `stalledMs`. */
function drained(outgoing: ServerResponse, stalledMs: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const settle = (ok: boolean) => {
      clearTimeout(timer);
      outgoing.off("drain", onDrain).off("close", onClose);
      resolve(ok);
    };
    const onDrain = () => settle(true);
    const onClose = () => settle(false);
    const timer = setTimeout(() => settle(false), stalledMs);
    outgoing.once("drain", onDrain).once("close", onClose);
  });
}

/** A body written as it is read, waiting for the socket to drain; a client that goes away (or stops reading) cancels it. */
export async function writeStream(body: ReadableStream<Uint8Array>, outgoing: ServerResponse, stalledMs = STALLED_CLIENT_MS): Promise<void> {
  const reader = body.getReader();
  const gone = () => void reader.cancel().catch(() => undefined);
  outgoing.once("close", gone);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (outgoing.destroyed) return;
      if (!outgoing.write(value) && !(await drained(outgoing, stalledMs))) {
        if (!outgoing.destroyed) {
          gone();
          outgoing.destroy();
        }
        return;
      }
    }
    outgoing.end();
  } catch {
    // The body failed mid-way (its read failed or was cancelled): cut the answer, so it is never taken for whole.
    outgoing.destroy();
  } finally {
    outgoing.off("close", gone);
  }
}

export function logFailure(error: unknown, incoming: IncomingMessage, rawPath: string): void {
  process.stderr.write(`[radar] ${incoming.method} ${rawPath} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
}

/** A request that failed outside a handler (or in Next): logged, answered 500 if nothing was sent yet, else cut. */
export function failed(error: unknown, incoming: IncomingMessage, outgoing: ServerResponse, rawPath: string): void {
  logFailure(error, incoming, rawPath);
  if (outgoing.headersSent) {
    outgoing.destroy();
    return;
  }
  outgoing.statusCode = 500;
  outgoing.setHeader("content-type", "text/plain; charset=utf-8");
  outgoing.end("Internal Server Error");
}
