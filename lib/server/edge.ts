import { isIP } from "node:net";
import { config } from "@/lib/config";
import { isLoopbackInterface } from "@/scripts/lib/loopback.mjs";
import { problem } from "./http";
import { withSecurityHeaders } from "./security-headers";
import { isMultipart } from "./server-action";

/**
 * What every request meets before the app: the Host allow-list (a page elsewhere that rebinds its
 * DNS name to this machine must not reach the radar), server actions from other origins, paths
 * that are not valid UTF-8, and who sent a request. Functions of the request and the settings;
 * proxy.ts and the route wrapper call them.
 */

export interface EdgeSettings {
  /** The port this server listens on. */
  port: number;
  /** The origin people reach it at (RADAR_PUBLIC_URL), if any. */
  publicUrl?: string;
}

/** The settings in effect. */
export function edgeSettings(): EdgeSettings {
  const { PORT, RADAR_PUBLIC_URL } = config();
  return { port: PORT, publicUrl: RADAR_PUBLIC_URL };
}

const LOOPBACK_NAMES = ["127.0.0.1", "localhost", "[::1]"];


/**
 * Whether the server may listen where it is told to, and what to say about it: beyond loopback
 * it must know its public address (the Host allow-list would refuse everyone else), and plain
 * http there sends credentials in the clear.
 */
export function listeningProblem(host: string, publicUrl: string | undefined): { refuse?: string; warn?: string } {
  if (isLoopbackInterface(host)) return {};
  if (!publicUrl) {
    return {
      refuse: `HOST=${host} listens beyond this machine, so RADAR_PUBLIC_URL must say the address people and agents reach the radar at (like https://radar.example.com, usually a TLS reverse proxy in front of it). Set it, or listen on HOST=127.0.0.1.`,
    };
  }
  if (publicUrl.startsWith("http:")) {
    return {
      warn: `RADAR_PUBLIC_URL=${publicUrl} is plain http: everything, tokens and sign-ins included, crosses the network unencrypted. Put a TLS reverse proxy in front and use its https address.`,
    };
  }
  return {};
}

/** The `Host` values this server answers to: loopback names on its port, and the public URL's host. */
export function allowedHosts({ port, publicUrl }: EdgeSettings): Set<string> {
  const hosts = new Set(LOOPBACK_NAMES.map((name) => `${name}:${port}`));
  if (port === 80) for (const name of LOOPBACK_NAMES) hosts.add(name);
  if (publicUrl) {
    const url = new URL(publicUrl);
    hosts.add(url.host.toLowerCase());
    // A client may spell out the default port.
    if (!url.port) hosts.add(`${url.hostname.toLowerCase()}:${url.protocol === "https:" ? 443 : 80}`);
  }
  return hosts;
}

/** The origins a browser may send a server action from: the same hosts, over their schemes. */
export function allowedOrigins({ port, publicUrl }: EdgeSettings): string[] {
  const origins = LOOPBACK_NAMES.map((name) => `http://${name}:${port}`);
  if (publicUrl) origins.push(new URL(publicUrl).origin);
  return origins;
}

/**
 * A 421 for a request whose Host is not this server's, or null when it is. A request without a
 * Host (HTTP/1.0, or one built in-process) passes: browsers, the ones a rebound DNS name would
 * turn against the radar, always send it.
 */
export function refuseForeignHost(host: string | null, settings: EdgeSettings): Response | null {
  if (host === null) return null;
  const given = host.trim().toLowerCase();
  if (allowedHosts(settings).has(given)) return null;
  return withSecurityHeaders(
    problem(
      421,
      "Misdirected Request",
      `This server does not answer to the host ${JSON.stringify(given.slice(0, 200))}. Open it at http://127.0.0.1:${settings.port}, or, to reach it by that name, set RADAR_PUBLIC_URL to the address people open it at (like https://radar.example.com).`,
    ),
  );
}

/**
 * A server action posted from a page elsewhere is refused before Next runs it (Next's own check
 * compares Origin with Host, which a rebound DNS name satisfies). Null when the request is not
 * an action or comes from an allowed origin.
 */
export function refuseForeignAction(request: Request, settings: EdgeSettings): Response | null {
  // Pages take POSTs only as actions (with JavaScript, or as a plain form without it). Next runs a
  // multipart POST as an action without an action id too, on any path it renders, /api/ included.
  const action = request.headers.has("next-action") || isMultipart(request.headers.get("content-type"));
  if (request.method !== "POST" || (new URL(request.url).pathname.startsWith("/api/") && !action)) return null;
  const origin = request.headers.get("origin");
  // Browsers send Origin with every POST; a request without one is not from a page.
  if (origin === null || allowedOrigins(settings).includes(origin.toLowerCase())) return null;
  return withSecurityHeaders(problem(403, "Forbidden", `Actions are accepted only from this server's own pages, not from ${JSON.stringify(origin.slice(0, 200))}.`));
}

/**
 * A path whose percent-escapes do not decode to UTF-8 (`/threads/%FF`) names nothing: a 400,
 * where Next would answer 500 while decoding its dynamic segments. Null when the path is fine.
 */
export function refuseMalformedPath(rawPath: string): Response | null {
  try {
    decodeURIComponent(rawPath);
    return null;
  } catch {
    return withSecurityHeaders(problem(400, "Bad path", "The path is not valid UTF-8 after percent-decoding."));
  }
}

/**
 * Every check a request meets before the app, in order: a foreign Host, an undecodable path, a
 * foreign action origin. proxy.ts runs it for Next; the ingestion listener (lib/server/listener)
 * runs it for the routes it serves. Null when the request may go on.
 */
export function refuseAtEdge(request: Request, settings: EdgeSettings): Response | null {
  return (
    refuseForeignHost(request.headers.get("host"), settings) ??
    refuseMalformedPath(new URL(request.url).pathname) ??
    refuseForeignAction(request, settings)
  );
}

/** `RADAR_TRUST_PROXY`: `loopback` and/or proxy addresses; absent, no forwarding header is believed. */
export type TrustedProxies = readonly string[] | undefined;

/**
 * The header the server's socket address arrives in (set by the server, lib/server/listener, on
 * every request, overwriting whatever a client sent): Next fills X-Forwarded-For from the socket only when the
 * client sent none, so that header alone cannot tell a client's claim from the truth.
 */
export const PEER_HEADER = "x-radar-peer";

export interface RequestClient {
  /** The client's IP address, as far as trusted proxies vouch for it. */
  address: string;
  protocol: "http" | "https";
}

/** The client's address with the deployment's trusted proxies (RADAR_TRUST_PROXY). */
export function clientAddress(headers: Headers): string {
  return requestClient(headers, config().RADAR_TRUST_PROXY).address;
}

/**
 * Who sent a request and over what: the socket's peer, or, when that peer is a trusted proxy,
 * the nearest address in X-Forwarded-For that is not itself a trusted proxy (and the proxy's
 * X-Forwarded-Proto). Sign-in rate limits and per-client caps key on this address.
 */
export function requestClient(headers: Headers, trusted: TrustedProxies): RequestClient {
  const recorded = headers.get(PEER_HEADER);
  if (recorded === null) {
    // No socket address recorded (a request built in a test, not from the server): the nearest hop.
    const forwarded = forwardedChain(headers);
    return { address: forwarded.at(-1) ?? "unknown", protocol: "http" };
  }
  // Recorded but empty or not an address (the socket was already gone): nobody's word is taken.
  const peer = normalizeAddress(recorded);
  if (!peer) return { address: "unknown", protocol: "http" };
  if (!isTrusted(peer, trusted)) return { address: peer, protocol: "http" };
  let address = peer;
  for (const hop of forwardedChain(headers).reverse()) {
    address = hop;
    if (!isTrusted(hop, trusted)) break;
  }
  const proto = headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
  return { address, protocol: proto === "https" ? "https" : "http" };
}

function forwardedChain(headers: Headers): string[] {
  return (headers.get("x-forwarded-for") ?? "")
    .split(",")
    .map(normalizeAddress)
    .filter((hop): hop is string => Boolean(hop));
}

/** An address as written in a header, without brackets, port or IPv4-mapped prefix; null if not an IP. */
function normalizeAddress(text: string): string | null {
  let address = text.trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(address);
  if (bracketed) address = bracketed[1];
  else if (/^[\d.]+:\d+$/.test(address)) address = address.slice(0, address.lastIndexOf(":"));
  if (address.startsWith("::ffff:") && isIP(address.slice(7)) === 4) address = address.slice(7);
  return isIP(address) ? address : null;
}

function isTrusted(address: string, trusted: TrustedProxies): boolean {
  if (!trusted) return false;
  if (trusted.includes("loopback") && (address === "::1" || address.startsWith("127."))) return true;
  return trusted.some((entry) => entry !== "loopback" && normalizeAddress(entry) === address);
}
