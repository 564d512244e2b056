import fs from "node:fs";
import http from "node:http";
import { parentPort } from "node:worker_threads";
import { failed } from "./node-http";
import type { PageRendererData } from "./role";

/**
 * The page renderer's thread (page-renderer.ts starts it): a Next serving the pages the listener
 * forwards, on a Unix socket. instrumentation.ts boots nothing here (role.ts): the database was
 * opened and migrated, and the watchdog started, by the listener's thread.
 */
export async function renderPages(root: string, { socketPath, hostname, port }: PageRendererData): Promise<void> {
  (process.env as Record<string, string | undefined>).NODE_ENV ||= "production";
  const { default: next } = await import("next");
  const app = next({ dev: false, dir: root, hostname, port });
  await app.prepare();
  const handle = app.getRequestHandler();
  // A restarted renderer finds its predecessor's socket file.
  fs.rmSync(socketPath, { force: true });
  const server = http.createServer((incoming, outgoing) => {
    handle(incoming, outgoing).catch((error: unknown) => failed(error, incoming, outgoing, (incoming.url ?? "/").split("?")[0]));
  });
  // The listener's connections stay open for its next pages: it decides when they close, so it
  // never sends a request on a connection this side is closing.
  server.keepAliveTimeout = 0;
  server.listen(socketPath, () => parentPort?.postMessage({ ready: true }));
}
