import { describe, expect, it } from "vitest";
import { forRenderer, matchLeanRoute, passesProxy } from "./routes";

/** Who answers what: the listener itself (lean routes), the page renderer, or the listener's Next. */
describe("forRenderer: what the page renderer answers", () => {
  const cases: ReadonlyArray<readonly [method: string, path: string, headers: Record<string, string>, expected: boolean, why: string]> = [
    ["GET", "/", {}, true, "the board"],
    ["GET", "/threads/t-1", {}, true, "a thread's page"],
    ["HEAD", "/insights", {}, true, "a HEAD of a page"],
    ["GET", "/threads/t-1", { rsc: "1" }, true, "a page's RSC payload (client navigation)"],
    ["GET", "/_next/static/chunks/app.js", {}, true, "Next's static files"],
    ["GET", "/api/v1/threads", {}, true, "the board's rows"],
    ["GET", "/api/v1/threads/t-1", {}, true, "a thread's detail"],
    ["GET", "/api/v1/threads/by-key/7/events", {}, true, "a thread's earlier events"],
    ["GET", "/api/v1/threads/by-key/7/events/3/raw", {}, true, "an event's raw payload"],
    ["GET", "/api/v1/insights", {}, true, "insights"],
    ["GET", "/api/v1/incidents/i-1", {}, true, "an incident"],
    ["GET", "/api/v1/limits", {}, true, "limit windows"],
    ["POST", "/threads/t-1", { "next-action": "abc" }, false, "a server action: a write"],
    ["GET", "/threads/t-1", { "next-action": "abc" }, false, "a server action, whatever its method"],
    ["POST", "/", {}, false, "any POST"],
    ["GET", "/", { "content-length": "3" }, false, "a GET with a body"],
    ["GET", "/", { "transfer-encoding": "chunked" }, false, "a GET with a chunked body"],
    ["GET", "/api/v1/stream", {}, false, "the live stream: the bus is on the listener's thread"],
    ["GET", "/api/health", {}, false, "health: the listener's own state"],
    ["GET", "/api/metrics", {}, false, "metrics"],
    ["GET", "/api/v1/diagnostics/memory", {}, false, "memory diagnostics: the listener's own heap"],
    ["GET", "/api/v1/exports/attempts", {}, false, "an export: it streams from the read worker"],
    ["GET", "/api/v1/threads/t-1/export", {}, false, "a thread's export"],
    ["GET", "/api/v1/directives", {}, false, "the directive long-poll"],
    ["GET", "/api/auth/get-session", {}, false, "Better Auth"],
    ["GET", "/api", {}, false, "the bare API path"],
    ["GET", "/v1/logs", {}, false, "an OTLP path"],
    ["GET", "/threads/", {}, false, "a trailing slash: Next redirects it"],
    ["GET", "//threads", {}, false, "a doubled slash"],
    ["GET", "/api/v1/../../threads", {}, false, "dot segments"],
    ["GET", "*", {}, false, "not a path"],
    ["GET", "/%61pi/v1/stream", {}, false, "an escaped /api/: Next decodes it to the live stream"],
    ["GET", "/%61pi/health", {}, false, "an escaped /api/health"],
    ["GET", "/%61pi/v1/threads", {}, true, "an escaped read the renderer answers"],
    ["GET", "/v%31/logs", {}, false, "an escaped OTLP path"],
    ["GET", "/threads/%2e%2e/api/health", {}, false, "escaped dot segments"],
    ["GET", "/threads/%E0%A4%A", {}, false, "an undecodable path: the listener's Next refuses it"],
    ["GET", "/threads/t%2F1", {}, true, "an escaped slash in a thread id: still a page"],
    ["GET", "/%61pi%2Fv1%2Fstream", {}, false, "escaped slashes that spell the live stream"],
    ["GET", "/threads/caf%C3%A9", {}, true, "an escaped letter in a thread id"],
  ];
  it.each(cases)("%s %s %o → %s (%s)", (method, path, headers, expected) => {
    expect(forRenderer(method, path, headers)).toBe(expected);
  });
});

describe("matchLeanRoute: what the listener answers itself", () => {
  it("matches a route and hands back its raw parameters", () => {
    expect(matchLeanRoute("POST", "/api/v1/directives/d%201/ack")).toMatchObject({ route: { path: "/api/v1/directives/[id]/ack" }, params: { id: "d%201" } });
    expect(matchLeanRoute("GET", "/api/v1/exports/audit")?.route.path).toBe("/api/v1/exports/audit");
    expect(matchLeanRoute("GET", "/api/v1/exports/attempts")?.params).toEqual({ kind: "attempts" });
    expect(matchLeanRoute("GET", "/api/health")?.route.module).toBe("app/api/health");
    expect(matchLeanRoute("GET", "/api/metrics")?.route.module).toBe("app/api/metrics");
  });
  it("leaves other methods, paths and paths Next normalises to Next", () => {
    expect(matchLeanRoute("GET", "/api/v1/events")).toBeNull();
    expect(matchLeanRoute("POST", "/api/v1/events/")).toBeNull();
    expect(matchLeanRoute("POST", "//api/v1/events")).toBeNull();
    expect(matchLeanRoute("POST", "/api/v1/threads")).toBeNull();
    expect(matchLeanRoute("POST", "/api/metrics")).toBeNull();
    expect(matchLeanRoute("GET", "/api/v1/diagnostics/memory")).toBeNull();
  });
});

describe("passesProxy: the lean requests proxy.ts's checks run on, as Next's matcher would", () => {
  const body = { "content-length": "20" };
  const cases: ReadonlyArray<readonly [path: string, headers: Record<string, string>, expected: boolean, why: string]> = [
    ["/api/health", {}, true, "no body"],
    ["/api/v1/events", body, false, "a body: the route wrapper checks the Host"],
    ["/api/v1/events", { "transfer-encoding": "chunked" }, false, "a body without a length"],
    ["/api/v1/events", { ...body, "next-action": "abc" }, true, "a body carrying a server action id"],
    ["/v1/logs", { ...body, "next-action": "abc" }, true, "an OTLP body carrying a server action id"],
    ["/api/v1/ingest/%C0", body, true, "a non-ASCII escape"],
    ["/api/x", { ...body, "content-type": "multipart/form-data; boundary=x" }, true, "a multipart form: Next runs it as an action without an id"],
    ["/v1/logs", { ...body, "content-type": "multipart/form-data; boundary=x" }, true, "a multipart form to the OTLP paths"],
    ["/api/v1/events", { ...body, "content-type": "application/json" }, false, "a JSON body"],
  ];
  it.each(cases)("%s %o → %s (%s)", (path, headers, expected) => {
    expect(passesProxy(path, headers)).toBe(expected);
  });
});
