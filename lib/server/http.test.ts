import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { acceptsGzip, BodyEncodingError, BodyTooLargeError, readBody } from "./http";

describe("acceptsGzip", () => {
  it.each([
    [null, false],
    ["", false],
    ["identity", false],
    ["gzip", true],
    ["gzip, deflate, br", true],
    ["br;q=1.0, GZIP;q=0.5", true],
    ["gzip;q=0", false],
    ["gzip;q=0.0, *", false],
    ["*", true],
    ["*;q=0", false],
    ["deflate, x-gzip", true],
  ])("%j → %s", (header, expected) => expect(acceptsGzip(header)).toBe(expected));
});

describe("a body refused as too large", () => {
  // The 413 closes the connection: whatever of the body is still unread then resets it, and a
  // client still writing gets EPIPE instead of the answer (seen on a busy machine). So the body
  // is read on and dropped to its end, within bounds (http.ts, discardRest).
  const LIMIT = 1_000;
  /** A request whose body of `size` bytes arrives 100 at a time; `pulled()` tells how much was read. */
  function request(size: number, declared: boolean) {
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= size) return controller.close();
        const chunk = new Uint8Array(Math.min(100, size - sent));
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const headers = declared ? { "content-length": String(size) } : undefined;
    return { request: new Request("http://radar.test/api/v1/events", { method: "POST", body, headers, duplex: "half" } as RequestInit), pulled: () => sent };
  }

  it.each([
    ["declared just over the limit", LIMIT + 500, true],
    ["declared at twice the limit", 2 * LIMIT, true],
    ["streamed without a length, just over the limit", LIMIT + 500, false],
  ])("%s: read to its end", async (_case, size, declared) => {
    const { request: refused, pulled } = request(size, declared);
    await expect(readBody(refused, LIMIT)).rejects.toBeInstanceOf(BodyTooLargeError);
    expect(pulled()).toBe(size);
  });

  it("declared far over the limit: dropped after twice the limit, not read to its end", async () => {
    const { request: refused, pulled } = request(100 * LIMIT, true);
    await expect(readBody(refused, LIMIT)).rejects.toBeInstanceOf(BodyTooLargeError);
    expect(pulled()).toBeLessThanOrEqual(2 * LIMIT + 200);
  });
});

describe("a compressed body", () => {
  const gzipped = gzipSync(Buffer.from('{"a":1}'));
  const request = (encoding: string) => new Request("http://radar.test/", { method: "POST", headers: { "content-encoding": encoding }, body: gzipped });

  it("is inflated within the limit on a route that takes gzip, refused past it", async () => {
    expect((await readBody(request("gzip"), 100, { gzip: true })).toString()).toBe('{"a":1}');
    await expect(readBody(request("gzip"), 5, { gzip: true })).rejects.toBeInstanceOf(BodyTooLargeError);
  });

  it("is refused with 415 on a route that does not take it, not read as text", async () => {
    for (const encoding of ["gzip", "deflate", "br", "gzip, gzip"]) {
      const refusal = await readBody(request(encoding), 1_000).catch((error: unknown) => error);
      expect(refusal, encoding).toBeInstanceOf(BodyEncodingError);
      expect((refusal as BodyEncodingError).status).toBe(415);
      expect((refusal as Error).message).toContain(`"${encoding}"`);
    }
    expect((await readBody(request("identity"), 1_000)).equals(gzipped)).toBe(true);
  });
});
