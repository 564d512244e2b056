import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { PATIENCE_MS } from "@/e2e/support/patience";
import { waitFor } from "@/e2e/support/relay-helpers";
import { sendWebResponse, writeStream } from "./node-http";

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
