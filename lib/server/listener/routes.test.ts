import { describe, expect, it } from "vitest";
import { matchLeanRoute, passesProxy } from "./routes";

/** The listener's route patterns (route-table.ts), without loading their handlers. */
const ROUTES = [
  ["POST", "/api/v1/events"],
  ["POST", "/api/v1/ingest/[format]"],
  ["POST", "/v1/logs"],
  ["GET", "/api/v1/directives"],
  ["POST", "/api/v1/directives/[id]/ack"],
  ["GET", "/api/health"],
  ["GET", "/api/metrics"],
  ["GET", "/api/v1/exports/audit"],
  ["GET", "/api/v1/exports/[kind]"],
].map(([method, path]) => ({ method, path }));

/** Who answers what: the listener itself (lean routes) or Next. */
describe("matchLeanRoute: what the listener answers itself", () => {
  it("matches a route and hands back its raw parameters", () => {
    expect(matchLeanRoute(ROUTES, "POST", "/api/v1/directives/d%201/ack")).toMatchObject({ route: { path: "/api/v1/directives/[id]/ack" }, params: { id: "d%201" } });
    expect(matchLeanRoute(ROUTES, "GET", "/api/v1/exports/audit")?.route.path).toBe("/api/v1/exports/audit");
    expect(matchLeanRoute(ROUTES, "GET", "/api/v1/exports/attempts")?.params).toEqual({ kind: "attempts" });
    expect(matchLeanRoute(ROUTES, "GET", "/api/health")?.route.path).toBe("/api/health");
    expect(matchLeanRoute(ROUTES, "GET", "/api/metrics")?.route.path).toBe("/api/metrics");
  });
  it("leaves other methods, paths and paths Next normalises to Next", () => {
    expect(matchLeanRoute(ROUTES, "GET", "/api/v1/events")).toBeNull();
    expect(matchLeanRoute(ROUTES, "POST", "/api/v1/events/")).toBeNull();
    expect(matchLeanRoute(ROUTES, "POST", "//api/v1/events")).toBeNull();
    expect(matchLeanRoute(ROUTES, "POST", "/api/v1/threads")).toBeNull();
    expect(matchLeanRoute(ROUTES, "POST", "/api/metrics")).toBeNull();
    expect(matchLeanRoute(ROUTES, "GET", "/api/v1/diagnostics/memory")).toBeNull();
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
