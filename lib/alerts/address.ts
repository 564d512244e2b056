import { isIP } from "node:net";

/**
 * Which webhook addresses the radar may call. Alerts must never become a way to reach internal
 * services: a destination's host must match the deployment's allow-list when one is set, and a
 * loopback, private, link-local or unique-local address (IPv4-mapped and NAT64 forms included)
 * is refused unless its host is listed by name, not only by a wildcard. The host's addresses are
 * checked when the destination is saved and again at every delivery, since DNS may change.
 */

/** Host patterns (`hooks.slack.com`, `*.example.com`, `127.0.0.1`, `*`), lower-case. */
export function parseHostPatterns(text: string | undefined): string[] {
  return (text ?? "")
    .split(",")
    .map((pattern) => pattern.trim().toLowerCase().replace(/^\[|\]$/g, ""))
    .filter(Boolean);
}

/** The effective allow-list as an admin reads it (on the Alerts page and in refusals). */
export function allowListText(patterns: readonly string[]): string {
  return patterns.length ? patterns.join(", ") : "not set";
}

function matches(pattern: string, host: string): boolean {
  if (pattern === "*") return true;
  if (pattern.startsWith("*.")) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
  return pattern === host;
}

export type HostListing = "listed" | "wildcard" | "unlisted";

/** How the allow-list covers a host: by name, only by a wildcard, or not at all. */
export function hostListing(host: string, patterns: readonly string[]): HostListing {
  const name = host.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
  const hits = patterns.filter((pattern) => matches(pattern, name));
  if (hits.some((pattern) => !pattern.includes("*"))) return "listed";
  return hits.length ? "wildcard" : "unlisted";
}

function ipv4Bytes(ip: string): number[] {
  return ip.split(".").map(Number);
}

function ipv6Words(ip: string): number[] {
  let text = ip.toLowerCase().split("%")[0];
  // A dotted IPv4 tail (::ffff:10.0.0.1) becomes two words.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = ipv4Bytes(dotted[1]);
    text = text.slice(0, -dotted[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split("::");
  const part = (s: string | undefined) => (s ? s.split(":").map((w) => parseInt(w, 16)) : []);
  const left = part(head);
  const right = part(tail);
  const zeros = tail === undefined ? [] : Array(8 - left.length - right.length).fill(0);
  return [...left, ...zeros, ...right];
}

function privateIpv4([a, b, c]: number[]): boolean {
  return (
    a === 0 || // this network
    a === 10 ||
    a === 127 || // loopback
    (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
    (a === 169 && b === 254) || // link-local (cloud metadata lives here)
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0 && c === 0) ||
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    a >= 224 // multicast and reserved
  );
}

/** Whether an IP address (v4 or v6) is loopback, private, link-local, unique-local or otherwise not public. */
export function isPrivateAddress(ip: string): boolean {
  const version = isIP(ip.split("%")[0]);
  if (version === 4) return privateIpv4(ipv4Bytes(ip));
  if (version !== 6) return true;
  const w = ipv6Words(ip);
  const v4 = [w[6] >> 8, w[6] & 0xff, w[7] >> 8, w[7] & 0xff];
  const zeroUpTo = (n: number) => w.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(5) && w[5] === 0xffff) return privateIpv4(v4); // IPv4-mapped
  if (w[0] === 0x64 && w[1] === 0xff9b && w.slice(2, 6).every((x) => x === 0)) return privateIpv4(v4); // NAT64
  if (zeroUpTo(6)) return true; // ::, ::1 and the old IPv4-compatible form
  return (
    (w[0] & 0xfe00) === 0xfc00 || // unique-local fc00::/7
    (w[0] & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (w[0] & 0xffc0) === 0xfec0 || // site-local (deprecated)
    (w[0] & 0xff00) === 0xff00 || // multicast
    (w[0] === 0x2001 && w[1] === 0x0db8) // documentation
  );
}

export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

/** The parts of a destination URL that need no DNS: scheme, credentials, the allow-list by name. */
export function checkWebhookUrl(text: string, patterns: readonly string[]): UrlCheck {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, reason: "not a URL" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return { ok: false, reason: "only http and https webhooks are sent" };
  if (url.username || url.password) return { ok: false, reason: "credentials in the URL would be logged; use the signature instead" };
  if (patterns.length && hostListing(url.hostname, patterns) === "unlisted") {
    return { ok: false, reason: `${url.hostname} is not in RADAR_WEBHOOK_ALLOW (${allowListText(patterns)})` };
  }
  return { ok: true, url };
}

/** The resolved addresses of a host that may not be called: private ones, unless the host is listed by name. */
export function refusedAddresses(host: string, addresses: readonly string[], patterns: readonly string[]): string[] {
  if (hostListing(host, patterns) === "listed") return [];
  return addresses.filter(isPrivateAddress);
}
