import http from "node:http";

/**
 * The benchmarks' ingestion client: POSTs (events, OTLP exports) over node:http with keep-alive
 * connections. Not fetch: undici's fetch spent 0.41–0.80 ms of the bench process's CPU per
 * single-event POST against 0.08–0.24 ms for this (`npx tsx scripts/bench-ingest.ts --clients`),
 * as much as the server's ingest thread spends on the request, and the bench runs on the server's
 * two cores: with fetch the singles figure measured the client as much as the server.
 */
const agent = new http.Agent({ keepAlive: true });
/** A bound that only ends a hung request (a bench's loops are bounded in count). */
const REQUEST_TIMEOUT_MS = 120_000;

export interface PostAnswer {
  status: number;
  text: string;
  /** From the request's start to the answer's last byte. */
  ms: number;
}

export function postEvents(server: { url: string; token: string }, body: unknown): Promise<PostAnswer> {
  return postBody(server, "/api/v1/events", JSON.stringify(body), { "content-type": "application/json" });
}

/** POSTs a body to `pathname` with the server's ingest token and the given headers. */
export function postBody(server: { url: string; token: string }, pathname: string, body: string | Buffer, headers: Record<string, string>): Promise<PostAnswer> {
  const started = performance.now();
  const url = new URL(pathname, server.url);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        headers: { authorization: `Bearer ${server.token}`, ...headers, "content-length": Buffer.byteLength(body) },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("error", reject);
        response.on("end", () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8"), ms: performance.now() - started }));
      },
    );
    request.on("timeout", () => request.destroy(new Error(`POST ${url.pathname}: no answer within ${REQUEST_TIMEOUT_MS / 1000} s`)));
    request.on("error", reject);
    request.end(body);
  });
}
