import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { beforeAll, describe, expect, it } from "vitest";

/**
 * The route wrapper answers every refusal with problem+json before the handler runs: access,
 * path parameters, query, body size and shape, and the thread a path names.
 */
process.env.DATABASE_URL = `file:${path.join(fs.mkdtempSync(path.join(os.tmpdir(), "radar-route-")), "radar.db")}`;

let route: typeof import("./route").route;
let token: string;
let apiKey: string;
beforeAll(async () => {
  route = (await import("./route")).route;
  const tokens = await import("@/lib/server/tokens");
  token = tokens.generateToken();
  await tokens.createSource("route-test", token);
  apiKey = (await (await import("@/lib/auth/api-keys")).createApiKey({ name: "route-test", role: "admin", owner: null })).key;
});
const withKey = (init: RequestInit = {}) => ({ ...init, headers: { authorization: `Bearer ${apiKey}`, ...(init.headers as Record<string, string>) } });

const params = (values: Record<string, string>) => ({ params: Promise.resolve(values) });
const echo = () => new Response("ok");
async function problemOf(response: Response) {
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  return { status: response.status, ...((await response.json()) as { title: string; detail: string }) };
}

describe("route", () => {
  it("identifies an ingest caller by its bearer token, and says which part is wrong", async () => {
    const handler = route({ access: "ingest" }, ({ source }) => new Response(source.name));
    expect(await (await handler(new Request("http://x/", { headers: { authorization: `Bearer ${token}` } }))).text()).toBe("route-test");
    expect(await problemOf(await handler(new Request("http://x/")))).toMatchObject({ status: 401, detail: expect.stringMatching(/Authorization: Bearer/) });
    const wrong = await handler(new Request("http://x/", { headers: { authorization: "Bearer rr_nope" } }));
    expect(await problemOf(wrong)).toMatchObject({ status: 401, detail: expect.stringMatching(/unknown or has been revoked/) });
  });

  it("refuses a cross-site browser request to an operator route, not to a viewer route", async () => {
    const crossSite = () => new Request("http://x/", withKey({ method: "POST", headers: { "sec-fetch-site": "cross-site" } }));
    expect((await route({ access: "operator" }, echo)(crossSite())).status).toBe(403);
    expect((await route({ access: "viewer" }, echo)(crossSite())).status).toBe(200);
  });

  it.each([
    ["a path parameter", { params: { schema: z.object({ kind: z.enum(["a"], { error: "expected a" }) }), status: 404 as const, title: "Unknown" } }, "http://x/", { kind: "b" }, 404, "expected a"],
    ["a query", { query: { schema: z.object({ n: z.coerce.number().max(3) }), title: "Bad query" } }, "http://x/?n=9", {}, 400, "n: Too big: expected number to be <=3"],
  ])("answers a bad %s before the handler runs", async (_what, spec, url, values, status, detail) => {
    const response = await route({ access: "public", ...spec }, () => {
      throw new Error("the handler ran");
    })(new Request(url), params(values));
    expect(await problemOf(response)).toMatchObject({ status, detail });
  });

  it("answers a NUL (U+0000) no store can hold: 404 in a path, 400 in a query or a JSON body, naming where", async () => {
    const handler = route(
      { access: "public", body: { schema: z.object({ reason: z.unknown() }), maxBytes: 1024, title: "Invalid", example: "a JSON object", emptyAs: {} } },
      () => {
        throw new Error("the handler ran");
      },
    );
    const post = (url: string, body: string, values: Record<string, string> = {}) => handler(new Request(url, { method: "POST", body }), params(values));
    expect(await problemOf(await post("http://x/", "{}", { id: "a\u0000" }))).toMatchObject({ status: 404, detail: expect.stringMatching(/NUL/) });
    const sourced = await route({ access: "public", thread: true }, echo)(new Request("http://x/?source=s%00"), params({ id: "t1" }));
    expect(await problemOf(sourced)).toMatchObject({ status: 404, detail: expect.stringMatching(/NUL/) });
    const queried = route({ access: "public", query: { schema: z.object({ q: z.string().optional() }), title: "Bad query" } }, echo);
    expect(await problemOf(await queried(new Request("http://x/?q=a%00")))).toMatchObject({ status: 400, title: "Bad query", detail: "q: contains a NUL character (U+0000), which cannot be stored" });
    // On every route, whether or not it declares its query (the insights route reads its own), a
    // repeated parameter and a parameter's name included: PostgreSQL refuses a NUL in any text.
    const reading = route({ access: "public" }, echo);
    expect(await problemOf(await reading(new Request("http://x/?=null&q=%00")))).toMatchObject({ status: 400, title: "Invalid query", detail: "q: contains a NUL character (U+0000), which cannot be stored" });
    expect(await problemOf(await reading(new Request("http://x/?q=a&q=b%00")))).toMatchObject({ status: 400, detail: "q: contains a NUL character (U+0000), which cannot be stored" });
    expect(await problemOf(await reading(new Request("http://x/?a%00=1")))).toMatchObject({ status: 400, detail: "a query parameter's name: contains a NUL character (U+0000), which cannot be stored" });
    expect((await reading(new Request("http://x/?q=a"))).status).toBe(200);
    expect(await problemOf(await post("http://x/", '{"reason":{"why":["\\u0000"]}}'))).toMatchObject({ status: 400, title: "Invalid", detail: "reason.why.0: contains a NUL character (U+0000), which cannot be stored" });
  });

  it("reads one JSON body within its limit: 413 when larger, 400 when unparseable or invalid, emptyAs when empty", async () => {
    const handler = route(
      { access: "public", body: { schema: z.object({ reason: z.string().optional() }), maxBytes: 32, title: "Invalid", example: "a JSON object", emptyAs: {} } },
      ({ body }) => Response.json(body),
    );
    const post = (body: string) => handler(new Request("http://x/", { method: "POST", body }));
    expect(await (await post('{"reason":"why"}')).json()).toEqual({ reason: "why" });
    expect(await (await post("")).json()).toEqual({});
    expect(await problemOf(await post("x".repeat(33)))).toMatchObject({ status: 413 });
    expect(await problemOf(await post("{"))).toMatchObject({ status: 400, title: "Unparseable body", detail: "Expected a JSON object." });
    expect(await problemOf(await post('{"reason":1}'))).toMatchObject({ status: 400, title: "Invalid", detail: expect.stringMatching(/^reason: /) });
  });

  it("refuses anonymous callers with 401, a short role with 403 naming the permission, and an ingest token outside ingestion", async () => {
    expect(await problemOf(await route({ access: "viewer" }, echo)(new Request("http://x/")))).toMatchObject({ status: 401, detail: expect.stringMatching(/viewer/) });
    const viewerKey = (await (await import("@/lib/auth/api-keys")).createApiKey({ name: "route-viewer", role: "viewer", owner: null })).key;
    const asViewer = new Request("http://x/", { method: "POST", headers: { authorization: `Bearer ${viewerKey}` } });
    const refused = await route({ access: "operator" }, echo)(asViewer);
    expect(await problemOf(refused.clone())).toMatchObject({ status: 403, detail: expect.stringMatching(/operator/) });
    expect(((await refused.json()) as { permission: string }).permission).toBe("operator");
    const asToken = new Request("http://x/", { headers: { authorization: `Bearer ${token}` } });
    expect(await problemOf(await route({ access: "viewer" }, echo)(asToken))).toMatchObject({ status: 401, detail: expect.stringMatching(/ingest token/) });
    const keyIngests = new Request("http://x/", { headers: { authorization: `Bearer ${apiKey}` } });
    expect(await problemOf(await route({ access: "ingest" }, echo)(keyIngests))).toMatchObject({ status: 401, detail: expect.stringMatching(/API key does not ingest/) });
  });

  it("resolves the thread a path names, or 404", async () => {
    const response = await route({ access: "viewer", thread: true }, echo)(new Request("http://x/", withKey()), params({ id: "no-such-thread" }));
    expect(await problemOf(response)).toMatchObject({ status: 404, title: "Not found", detail: 'No thread "no-such-thread".' });
  });
});
