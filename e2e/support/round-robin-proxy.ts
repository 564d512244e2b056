import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A small load balancer for the multi-instance suite: each request goes to the next of N upstream
 * instances in turn, and its answer streams back as it comes (server-sent events and directive
 * long-polls included, nothing buffered). An upstream that refuses the connection (a killed
 * instance) is skipped for the next one, as a load balancer's health check would, so callers keep
 * working through the proxy while an instance is down. Request bodies are read whole first (they
 * are small in tests), so a refused request can be sent again elsewhere.
 */
export interface RoundRobinProxy {
  url: string;
  /** Requests answered by each upstream so far (in the order given). */
  served: number[];
  close(): Promise<void>;
}

export async function startRoundRobinProxy(upstreams: string[]): Promise<RoundRobinProxy> {
  let next = 0;
  const served = upstreams.map(() => 0);
  const open = new Set<http.ServerResponse>();

  const forward = (request: http.IncomingMessage, response: http.ServerResponse, body: Buffer, tried: number) => {
    const index = next++ % upstreams.length;
    const target = new URL(request.url ?? "/", upstreams[index]);
    const upstream = http.request(
      target,
      // The upstream's own address as Host: each instance answers to its address (the edge's allow-list).
      { method: request.method, headers: { ...request.headers, host: target.host }, agent: false },
      (answer) => {
        served[index]++;
        response.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        // Flushed as it arrives: a live stream's notices reach the caller one by one.
        response.flushHeaders();
        answer.pipe(response);
      },
    );
    upstream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "ECONNREFUSED" && !response.headersSent && tried + 1 < upstreams.length) return forward(request, response, body, tried + 1);
      if (!response.headersSent) response.writeHead(502, { "content-type": "text/plain" }).end(`upstream ${upstreams[index]}: ${error.message}`);
      else response.destroy(error);
    });
    // The caller went away (a closed stream, an aborted poll): so does the upstream request.
    response.on("close", () => upstream.destroy());
    upstream.end(body);
  };

  const server = http.createServer((request, response) => {
    open.add(response);
    response.on("close", () => open.delete(response));
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => forward(request, response, Buffer.concat(chunks), 0));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    async close() {
      for (const response of open) response.destroy();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections idle between requests would hold close() open.
      server.closeAllConnections();
      await closed;
    },
  };
}
