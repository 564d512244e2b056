import fs from "node:fs";
import http from "node:http";
import { parentPort } from "node:worker_threads";
import { failed } from "./node-http";
import type { PageRendererData, RendererMessage } from "./role";
import { forRenderer } from "./routes";

/**
 * The page renderer's thread (page-renderer.ts starts it): a Next serving the pages the listener
 * forwards, on a Unix socket. instrumentation.ts boots nothing here (role.ts): the database was
 * opened and migrated, and the watchdog started, by the listener's thread.
 */
export async function renderPages(root: string, { socketPath, hostname, port }: PageRendererData): Promise<void> {
  parentPort?.on("message", (message: RendererMessage) => {
    if (message?.ping) parentPort?.postMessage({ pong: true } satisfies RendererMessage);
  });
  (process.env as Record<string, string | undefined>).NODE_ENV ||= "production";
  const { default: next } = await import("next");
  const app = next({ dev: false, dir: root, hostname, port });
  await app.prepare();
  const handle = app.getRequestHandler();
  // A restarted renderer finds its predecessor's socket file.
  fs.rmSync(socketPath, { force: true });
  const server = http.createServer((incoming, outgoing) => {
    const rawPath = (incoming.url ?? "/").split("?")[0];
    // Only what the listener forwards (routes.ts): the live stream, say, would never hear the bus here.
    if (!forRenderer(incoming.method ?? "GET", rawPath, incoming.headers)) {
      outgoing.writeHead(421, { "content-type": "text/plain; charset=utf-8" }).end("The page renderer answers pages and their reads only.");
      return;
    }
    handle(incoming, outgoing).catch((error: unknown) => failed(error, incoming, outgoing, rawPath));
  });
  // The listener's connections stay open for its next pages: it decides when they close, so it
  // never sends a request on a connection this side is closing.
  server.keepAliveTimeout = 0;
  server.listen(socketPath, () => parentPort?.postMessage({ ready: true } satisfies RendererMessage));
}
