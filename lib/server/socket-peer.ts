import http from "node:http";
import { PEER_HEADER } from "./edge";
import { shared } from "@/lib/process-state";

const sharedForPeers = shared<{ peers?: boolean }>("peers", () => ({}));

/**
 * Writes each request's socket address into PEER_HEADER (replacing any value the client sent),
 * so route handlers, which see only headers, can tell who connected: Next fills X-Forwarded-For
 * from the socket only when the client sent none. Once per process, before requests are served.
 */
export function recordSocketPeers(): void {
  if (sharedForPeers.peers) return;
  sharedForPeers.peers = true;
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (this: http.Server, event: string | symbol, ...args: unknown[]) {
    if (event === "request") {
      const request = args[0] as http.IncomingMessage;
      request.headers[PEER_HEADER] = request.socket.remoteAddress ?? "";
    }
    return (emit as (event: string | symbol, ...args: unknown[]) => boolean).call(this, event, ...args);
  } as typeof emit;
}
