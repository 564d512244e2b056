import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * Which webhook addresses the radar may call. Alerts must never become a way to reach internal
 * services: a destination's host must match the deployment's allow-list when one is set, and a
 * loopback, private, link-local, unique-local or otherwise not public address (IPv6 forms that
 * embed an IPv4 address are judged by that address) is refused unless its host is listed by
 * name, not only by a wildcard. The host's addresses are
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

/**
 * IPv6 ranges whose addresses carry an IPv4 address, and where it sits (as ipaddr.js names
 * them): IPv4-mapped ::ffff:0:0/96, IPv4-translated ::ffff:0:0:0/96, NAT64 64:ff9b::/96 (and
 * the local-use 64:ff9b:1::/48, read with the /96 layout), 6to4 2002::/16 and Teredo 2001::/32,
 * whose server address is in the clear and whose client address is inverted.
 */
const EMBEDDING: Partial<Record<string, (w: number[]) => ipaddr.IPv4[]>> = {
  ipv4Mapped: (w) => [ipv4Of(w[6], w[7])],
  rfc6145: (w) => [ipv4Of(w[6], w[7])],
  rfc6052: (w) => [ipv4Of(w[6], w[7])],
  "6to4": (w) => [ipv4Of(w[1], w[2])],
  teredo: (w) => [ipv4Of(w[6] ^ 0xffff, w[7] ^ 0xffff), ipv4Of(w[2], w[3])],
};

const ipv4Of = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);

/** Where public IPv6 addresses are: IANA allocates global unicast from 2000::/3 only. */
const GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR("2000::/3");
/**
 * Local-use NAT64 translates into the operator's own network, and the IPv4's place in it depends
 * on a prefix length only the operator knows: never public, whatever it seems to embed.
 */
const LOCAL_NAT64 = ipaddr.IPv6.parseCIDR("64:ff9b:1::/48");

/**
 * An address in the forms the socket layer takes (what DNS answers and URL hosts give), parsed;
 * a zone index is dropped. ipaddr.js is lenient where sockets are not (it reads `0x7f.1`, and
 * `::8.8.8.8` as if it were `::ffff:8.8.8.8`), so only what `isIP` accepts is parsed, and IPv6
 * first goes through the URL parser, which writes a dotted tail as two hex words.
 */
function parseAddress(ip: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const text = ip.split("%")[0];
  const version = isIP(text);
  if (version === 4) return ipaddr.IPv4.parse(text);
  if (version === 6) return ipaddr.IPv6.parse(new URL(`http://[${text}]`).hostname.slice(1, -1));
  return null;
}

/** The IPv4 address an IPv6 address carries (the client's for Teredo), or null when none. */
export function embeddedIpv4(ip: string): string | null {
  const address = parseAddress(ip);
  if (!(address instanceof ipaddr.IPv6)) return null;
  return EMBEDDING[address.range()]?.(address.parts)[0].toString() ?? null;
}

function isPublic(address: ipaddr.IPv4 | ipaddr.IPv6): boolean {
  if (address instanceof ipaddr.IPv4) return address.range() === "unicast";
  const embedded = EMBEDDING[address.range()];
  if (embedded) return !address.match(LOCAL_NAT64) && embedded(address.parts).every(isPublic);
  return address.range() === "unicast" && address.match(GLOBAL_UNICAST);
}

/**
 * Whether an IP address (v4 or v6) may not be called without the allow-list naming its host:
 * anything ipaddr.js does not class as plain unicast (loopback, private, link-local,
 * unique-local, carrier-grade NAT, documentation, benchmarking, multicast, reserved…), IPv6
 * outside global unicast, and IPv6 forms whose embedded IPv4 is any of these.
 */
export function isPrivateAddress(ip: string): boolean {
  const address = parseAddress(ip);
  return address === null || !isPublic(address);
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
