import { unstable_doesMiddlewareMatch } from "next/experimental/testing/server";
import { describe, expect, it } from "vitest";
import { config as proxyConfig } from "@/proxy";
import { allowedHosts, PEER_HEADER, refuseForeignAction, refuseForeignHost, refuseMalformedPath, requestClient } from "./edge";
import { contentSecurityPolicy, newNonce } from "./security-headers";

const local = { port: 4321 };
const shared = { port: 3000, publicUrl: "https://radar.example.com" };

describe("the Host allow-list", () => {
  it.each([
    ["127.0.0.1:4321", local, true],
    ["localhost:4321", local, true],
    ["[::1]:4321", local, true],
    ["LOCALHOST:4321", local, true],
    ["127.0.0.1:3000", local, false],
    ["127.0.0.1", local, false],
    ["evil.example:4321", local, false],
    ["", local, false],
    ["radar.example.com", shared, true],
    ["radar.example.com:443", shared, true],
    ["radar.example.com:3000", shared, false],
    ["127.0.0.1:3000", shared, true],
    ["evil.example", shared, false],
  ] as const)("Host %s with %o is allowed: %s", (host, settings, allowed) => {
    expect(refuseForeignHost(host, settings) === null).toBe(allowed);
  });

  it("allows loopback names without a port only on port 80, and an explicit public port as given", () => {
    expect(allowedHosts({ port: 80 }).has("localhost")).toBe(true);
    expect(allowedHosts({ port: 3000, publicUrl: "http://10.0.0.5:8080" })).toContain("10.0.0.5:8080");
  });

  it("refuses with 421 problem+json naming the host and how to allow it", async () => {
    const response = refuseForeignHost("evil.example:4321", local)!;
    expect(response.status).toBe(421);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    const body = await response.json();
    expect(body.detail).toContain('"evil.example:4321"');
    expect(body.detail).toContain("RADAR_PUBLIC_URL");
  });

  it("lets a request without a Host through (no browser sends one)", () => {
    expect(refuseForeignHost(null, local)).toBeNull();
  });
});

describe("server action origins", () => {
  const action = (origin: string | null, path = "/") =>
    new Request(`http://127.0.0.1:4321${path}`, { method: "POST", headers: { "next-action": "abc", ...(origin ? { origin } : {}) }, body: "[]" });

  it("accepts this server's own origins and refuses any other", () => {
    expect(refuseForeignAction(action("http://127.0.0.1:4321"), local)).toBeNull();
    expect(refuseForeignAction(action("http://localhost:4321"), local)).toBeNull();
    expect(refuseForeignAction(action("https://radar.example.com"), shared)).toBeNull();
    expect(refuseForeignAction(action("http://evil.example:4321"), local)?.status).toBe(403);
    expect(refuseForeignAction(action("null"), local)?.status).toBe(403);
  });

  it("leaves reads and API posts alone", () => {
    expect(refuseForeignAction(new Request("http://127.0.0.1:4321/", { headers: { origin: "http://evil.example" } }), local)).toBeNull();
    const apiPost = new Request("http://127.0.0.1:4321/api/v1/threads/x/stop", { method: "POST", headers: { origin: "http://evil.example" }, body: "{}" });
    expect(refuseForeignAction(apiPost, local)).toBeNull();
  });
});

describe("server actions on every path", () => {
  // Next runs a server action wherever it renders a page, its not-found page included: on /api/,
  // /v1/ and Next's own asset paths as well as on the pages.
  const paths = ["/", "/threads/t-1", "/api/v1/threads/t-1/stop", "/api/v1/events", "/api/nothing-here", "/v1/logs", "/v1/nothing-here", "/favicon.ico", "/_next/static/chunks/app.js", "/_next/image"];
  const withBody = { "content-length": "2", "content-type": "text/plain;charset=UTF-8" };

  it.each(paths)("a POST to %s carrying an action id meets proxy.ts, body or not", (path) => {
    for (const body of [withBody, {}, { "transfer-encoding": "chunked" }]) {
      expect(unstable_doesMiddlewareMatch({ config: proxyConfig, url: path, headers: { "next-action": "abc", ...body } }), JSON.stringify(body)).toBe(true);
    }
  });

  it.each(paths)("a foreign-origin POST to %s carrying an action id is refused there", (path) => {
    const request = new Request(`http://127.0.0.1:4321${path}`, { method: "POST", headers: { "next-action": "abc", origin: "http://evil.example" }, body: "[]" });
    expect(refuseForeignAction(request, local)?.status).toBe(403);
  });

  // A form posted without JavaScript is multipart and carries its action id in the body, not the header.
  const multipart = { "content-length": "20", "content-type": "multipart/form-data; boundary=----x" };

  it.each(paths)("a multipart POST to %s without an action id meets proxy.ts", (path) => {
    expect(unstable_doesMiddlewareMatch({ config: proxyConfig, url: path, headers: multipart })).toBe(true);
  });

  it.each(paths)("a foreign-origin multipart POST to %s is refused there", (path) => {
    const request = new Request(`http://127.0.0.1:4321${path}`, { method: "POST", headers: { ...multipart, origin: "http://evil.example" }, body: "x" });
    expect(refuseForeignAction(request, local)?.status).toBe(403);
  });

  it("API requests with a body and no action id still go straight to their route", () => {
    for (const path of ["/api/v1/events", "/api/v1/ingest/codex", "/v1/logs"]) {
      expect(unstable_doesMiddlewareMatch({ config: proxyConfig, url: path, headers: withBody }), path).toBe(false);
    }
  });
});

describe("undecodable paths", () => {
  it.each(["/threads/%FF", "/api/v1/threads/%ED%A0%80", "/api/v1/ingest/%C0", "/%E2%82"])("%s is a 400", (path) => {
    expect(refuseMalformedPath(path)?.status).toBe(400);
  });
  it.each(["/threads/abc", "/threads/%C3%A9", "/api/v1/threads/a%20b"])("%s passes", (path) => {
    expect(refuseMalformedPath(path)).toBeNull();
  });
});

describe("the content security policy", () => {
  it("admits scripts by this load's nonce only, and no frames, plugins or base URL", () => {
    const nonce = newNonce();
    expect(nonce).not.toBe(newNonce());
    const policy = contentSecurityPolicy(nonce);
    expect(policy).toContain(`script-src 'self' 'nonce-${nonce}' 'strict-dynamic'`);
    for (const directive of ["frame-ancestors 'none'", "object-src 'none'", "base-uri 'none'"]) expect(policy).toContain(directive);
    expect(policy).not.toContain("unsafe-eval");
    expect(contentSecurityPolicy(nonce, { development: true })).toContain("'unsafe-eval'");
  });
});

describe("the client of a request", () => {
  const headers = (values: Record<string, string>) => new Headers(values);

  it.each([
    ["no proxy trusted: the socket, whatever the client claims", { [PEER_HEADER]: "203.0.113.9", "x-forwarded-for": "1.1.1.1", "x-forwarded-proto": "https" }, undefined, "203.0.113.9", "http"],
    ["a trusted loopback proxy: the address it saw", { [PEER_HEADER]: "::ffff:127.0.0.1", "x-forwarded-for": "6.6.6.6, 198.51.100.7", "x-forwarded-proto": "https" }, ["loopback"], "198.51.100.7", "https"],
    ["a listed proxy chain: the nearest untrusted hop", { [PEER_HEADER]: "10.0.0.2", "x-forwarded-for": "6.6.6.6, 198.51.100.7, 10.0.0.3" }, ["10.0.0.2", "10.0.0.3"], "198.51.100.7", "http"],
    ["a peer that is not the trusted proxy", { [PEER_HEADER]: "198.51.100.8", "x-forwarded-for": "6.6.6.6" }, ["loopback"], "198.51.100.8", "http"],
    ["a trusted proxy that forwarded nothing", { [PEER_HEADER]: "127.0.0.1" }, ["loopback"], "127.0.0.1", "http"],
    ["a recorded but empty peer (the socket was gone): nobody's word", { [PEER_HEADER]: "", "x-forwarded-for": "6.6.6.6" }, undefined, "unknown", "http"],
    ["a recorded peer that is not an address: nobody's word", { [PEER_HEADER]: "nonsense", "x-forwarded-for": "6.6.6.6" }, ["loopback"], "unknown", "http"],
    ["garbage in X-Forwarded-For is skipped", { [PEER_HEADER]: "127.0.0.1", "x-forwarded-for": "198.51.100.7, not-an-address" }, ["loopback"], "198.51.100.7", "http"],
    ["no socket address recorded (in-process)", { "x-forwarded-for": "192.0.2.4" }, undefined, "192.0.2.4", "http"],
  ] as const)("%s", (_name, values, trusted, address, protocol) => {
    expect(requestClient(headers(values), trusted)).toEqual({ address, protocol });
  });
});
