import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { destinationProblem, postWebhook } from "./webhook";

/** Deliveries check the addresses they connect to, every time, and never wait past their timeout. */
let server: http.Server;
let port: number;
beforeAll(async () => {
  server = http.createServer((request, response) => {
    if (request.url === "/hang") return; // never answers
    response.writeHead(request.url === "/busy" ? 503 : 200, request.url === "/busy" ? { "retry-after": "7" } : {}).end("body");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const options = (allow: string[], timeoutMs = 5_000) => ({ allow, timeoutMs });

describe("postWebhook", () => {
  it("delivers to an address listed by name", async () => {
    expect(await postWebhook(`http://127.0.0.1:${port}/ok`, "{}", {}, options(["127.0.0.1"]))).toMatchObject({ status: 200 });
  });

  it("passes on the receiver's Retry-After", async () => {
    expect(await postWebhook(`http://127.0.0.1:${port}/busy`, "{}", {}, options(["127.0.0.1"]))).toMatchObject({ status: 503, retryAfter: "7" });
  });

  it("refuses a name that resolves to loopback when only a wildcard lists it (checked when connecting)", async () => {
    const result = await postWebhook(`http://localhost:${port}/ok`, "{}", {}, options(["*"]));
    expect(result.status).toBeNull();
    expect(result.error).toMatch(/loopback or private address/);
  });

  it("refuses a private IP literal without looking it up", async () => {
    expect((await postWebhook(`http://[::ffff:127.0.0.1]:${port}/ok`, "{}", {}, options(["*"]))).error).toMatch(/loopback or private address/);
  });

  it("gives up after its timeout", async () => {
    expect(await postWebhook(`http://127.0.0.1:${port}/hang`, "{}", {}, options(["127.0.0.1"], 200))).toMatchObject({ status: null, error: "no answer within 200 ms" });
  });

  it("refuses when saving what it would refuse when delivering", async () => {
    expect(await destinationProblem(`http://localhost:${port}/ok`, ["*"])).toMatch(/loopback or private address/);
    expect(await destinationProblem(`http://127.0.0.1:${port}/ok`, ["127.0.0.1"])).toBeNull();
    expect(await destinationProblem("https://hooks.example.com/x", ["hooks.slack.com"])).toMatch(/not in RADAR_WEBHOOK_ALLOW/);
  });
});
