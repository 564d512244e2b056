import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import { PEER_HEADER } from "../edge";

/**
 * Node's request as the Web Request a route handler takes, and its Response back onto Node's
 * socket: no copy of the body (it streams, so a route's size limit still refuses an oversized
 * one as it arrives), the socket's own address in PEER_HEADER, an AbortSignal that fires when
 * the client goes away (a directive long-poll stops waiting).
 */
export function toWebRequest(incoming: IncomingMessage, url: string, signal: AbortSignal, peer: string): Request {
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) headers.append(raw[i], raw[i + 1]);
  // The socket's address, never what a client claims under the same name.
  headers.set(PEER_HEADER, peer);
  const method = incoming.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
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
 * write with its length. The listener's routes answer small JSON documents, so the body is read
 * whole first: one write instead of a chunked stream's several. `extra` headers are added over the
 * handler's own.
 */
export async function sendWebResponse(response: Response, outgoing: ServerResponse, extra: ReadonlyArray<readonly [string, string]> = []): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    if (!FRAMING_HEADERS.has(name)) headers[name] = value;
  });
  for (const [name, value] of extra) headers[name.toLowerCase()] = value;
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) headers["set-cookie"] = cookies;
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
