import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { PATIENCE_MS } from "@/e2e/support/patience";
import { waitFor } from "@/e2e/support/relay-helpers";
import { jsonAnswer } from "../http";
import { sendWebResponse, writeStream } from "./node-http";
import { markLean } from "./routes";

const CHUNK = new Uint8Array(64 * 1024);

/** An endless body that counts what was read from it and whether it was cancelled. */
function endless() {
  const seen = { chunks: 0, cancelled: false };
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      seen.chunks++;
      controller.enqueue(CHUNK);
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { body, seen };
}

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve)))));
});

/** Serves one streamed answer with `stalledMs`, recording the most listeners its response ever held. */
async function serve(body: ReadableStream<Uint8Array>, stalledMs: number, limit?: number) {
  const state = { maxListeners: 0, finished: false, response: null as http.ServerResponse | null };
  const server = http.createServer((_request, response) => {
    state.response = response;
    const write = response.write.bind(response);
    response.write = ((chunk: Uint8Array) => {
      state.maxListeners = Math.max(state.maxListeners, response.listenerCount("close") + response.listenerCount("drain"));
      return write(chunk);
    }) as typeof response.write;
    response.writeHead(200);
    void writeStream(limit ? body.pipeThrough(take(limit)) : body, response, stalledMs).then(() => (state.finished = true));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { state, port: (server.address() as AddressInfo).port };
}

function take(chunks: number): TransformStream<Uint8Array, Uint8Array> {
  let left = chunks;
  return new TransformStream({
    transform(chunk, controller) {
      if (left-- > 0) controller.enqueue(chunk);
      if (left <= 0) controller.terminate();
    },
  });
}

describe("a streamed export (writeStream)", () => {
  it("waits for every drain without piling up listeners, and ends whole", async () => {
    const { body } = endless();
    const { state, port } = await serve(body, 60_000, 400);
    // A slow reader: the socket fills and drains many times.
    const received = await new Promise<number>((resolve, reject) => {
      http.get({ port, host: "127.0.0.1" }, (response) => {
        let bytes = 0;
        response.on("data", (chunk: Buffer) => {
          bytes += chunk.byteLength;
          response.pause();
          setImmediate(() => response.resume());
        });
        response.on("end", () => resolve(bytes));
        response.on("error", reject);
      });
    });
    expect(received).toBe(400 * CHUNK.byteLength);
    await waitFor(() => state.finished, PATIENCE_MS);
    // writeStream's own close listener and one wait's drain and close, never more.
    expect(state.maxListeners).toBeLessThanOrEqual(4);
  });

  it("gives up on a client that stops reading: the body is cancelled and the answer cut", async () => {
    const { body, seen } = endless();
    const { state, port } = await serve(body, 200);
    const request = http.get({ port, host: "127.0.0.1" }, (response) => response.pause());
    request.on("error", () => undefined);
    await waitFor(() => seen.cancelled && state.finished, PATIENCE_MS, () => `read ${seen.chunks} chunks`);
    expect(state.response?.destroyed).toBe(true);
    request.destroy();
  });
});

describe("a JSON answer to a request the listener answers (http.ts jsonAnswer)", () => {
  const body = { accepted: 1, note: "ünïcode ✓", nested: [1, null, "x"] };

  /** What a client receives for `response`, written by sendWebResponse. */
  async function received(response: Response) {
    const server = http.createServer((_request, outgoing) => void sendWebResponse(response, outgoing));
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    return { status: answer.status, type: answer.headers.get("content-type"), length: answer.headers.get("content-length"), text: await answer.text() };
  }

  it("travels beside a bodiless Response and reaches the client whole, with its length and status", async () => {
    const lean = markLean(new Request("http://radar.test/api/v1/events", { method: "POST" }));
    const response = jsonAnswer(lean, body, { status: 422 });
    expect(response.body).toBeNull();
    expect(await received(response)).toEqual({
      status: 422,
      type: "application/json",
      length: String(Buffer.byteLength(JSON.stringify(body))),
      text: JSON.stringify(body),
    });
  });

  it("to any other request (Next writes it) is Response.json's own, body and all", async () => {
    const response = jsonAnswer(new Request("http://radar.test/api/v1/events", { method: "POST" }), body, { status: 422 });
    expect(response.status).toBe(422);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toEqual(body);
  });
});
