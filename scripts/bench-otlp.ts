import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import generated from "@opentelemetry/otlp-transformer/build/src/generated/root.js";
import { hexIdsToBase64, loadOtlpCapture, otlpCaptureNames } from "../lib/ingest/otlp-fixtures";
import { postBody } from "./lib/post-events";
import { startServer, type RunningServer } from "./lib/server";
import { median, percentile } from "./lib/stats";

/**
 * OTLP over HTTP against the built app: good batches of log records (protobuf, gzipped, as the
 * agents' exporters send them), then compression bombs (10 MB of the bytes 0a 00, under 10 KB
 * gzipped) sent by several clients at once while /api/health is asked again and again: the
 * longest wait for its answer is what the bombs cost everyone else. Needs a build.
 */
const BATCH = 512;
const BATCHES = 30;
/** Batches before the measured ones: a server just started compiles its OTLP path during the first few. */
const WARM_UP_BATCHES = 5;
const BOMB_CLIENTS = 4;
const BOMBS_PER_CLIENT = 3;
export const HEALTH_WAIT_TARGET_MS = 250;


type Message = { fromObject(o: object): object; encode(m: object): { finish(): Uint8Array } };
const ExportLogs = (generated as unknown as { opentelemetry: { proto: { collector: { logs: { v1: Record<string, Message> } } } } }).opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;

/** Every captured log record with its resource, one resource entry each. */
function capturedLogs(): object[] {
  const entries: object[] = [];
  for (const name of otlpCaptureNames()) {
    for (const request of loadOtlpCapture(name)) {
      if (request.signal !== "logs") continue;
      const body = request.body as { resourceLogs: { resource?: unknown; scopeLogs: { scope?: unknown; logRecords?: object[] }[] }[] };
      for (const r of body.resourceLogs) for (const s of r.scopeLogs) for (const record of s.logRecords ?? []) entries.push({ resource: r.resource, scope: s.scope, record });
    }
  }
  return entries;
}

/** Batch `n`: BATCH captured records, each stated at its own time, so no batch repeats another. */
function batch(entries: object[], n: number): Buffer {
  const resourceLogs = Array.from({ length: BATCH }, (_, i) => {
    const { resource, scope, record } = entries[(n * BATCH + i) % entries.length] as { resource: unknown; scope: unknown; record: Record<string, unknown> };
    const timeUnixNano = String(BigInt(Date.UTC(2026, 0, 1)) * 1_000_000n + BigInt(n * BATCH + i) * 1_000n);
    return { resource, scopeLogs: [{ scope, logRecords: [{ ...record, timeUnixNano }] }] };
  });
  return gzipSync(ExportLogs.encode(ExportLogs.fromObject(hexIdsToBase64({ resourceLogs }) as object)).finish());
}

const OTLP_HEADERS = { "content-type": "application/x-protobuf", "content-encoding": "gzip" };

function post(server: RunningServer, path: string, body: Buffer): Promise<{ status: number; ms: number }> {
  return postBody(server, path, body, OTLP_HEADERS);
}

export interface OtlpBench {
  batch: { records: number; p50Ms: number; p90Ms: number; bytes: number };
  bombs: { sent: number; bytes: number; statuses: Record<string, number>; healthPolls: number; healthFailed: number; healthMaxMs: number; healthP50Ms: number };
}

export async function benchOtlp(): Promise<OtlpBench> {
  const server = await startServer();
  try {
    const entries = capturedLogs();
    const bodies = Array.from({ length: WARM_UP_BATCHES + BATCHES }, (_, n) => batch(entries, n));
    const times: number[] = [];
    for (const [n, body] of bodies.entries()) {
      const answer = await post(server, "/v1/logs", body);
      if (answer.status !== 200) throw new Error(`an OTLP batch was answered ${answer.status}`);
      if (n >= WARM_UP_BATCHES) times.push(answer.ms);
    }
    times.sort((a, b) => a - b);

    const bomb = gzipSync(Buffer.from(new Uint8Array(10_000_000).map((_, i) => (i % 2 === 0 ? 0x0a : 0x00))));
    const waits: number[] = [];
    let healthFailed = 0;
    let sending = true;
    // A server that falls over under the bombs is reported, not a crash of the bench.
    const poll = (async () => {
      while (sending) {
        const started = performance.now();
        try {
          await (await fetch(`${server.url}/api/health`)).arrayBuffer();
        } catch {
          healthFailed++;
        }
        waits.push(performance.now() - started);
      }
    })();
    const statuses: Record<string, number> = {};
    const paths = ["/v1/logs", "/v1/traces", "/v1/metrics"];
    await Promise.all(
      Array.from({ length: BOMB_CLIENTS }, async (_, client) => {
        for (let i = 0; i < BOMBS_PER_CLIENT; i++) {
          const status = await post(server, paths[(client + i) % paths.length], bomb).then(
            (answer) => String(answer.status),
            (error: Error) => error.message,
          );
          statuses[status] = (statuses[status] ?? 0) + 1;
        }
      }),
    );
    sending = false;
    await poll;
    const round = (ms: number) => Math.round(ms * 10) / 10;
    return {
      batch: { records: BATCH, p50Ms: round(median(times)), p90Ms: round(percentile(times, 90)), bytes: Math.round(bodies.reduce((sum, b) => sum + b.length, 0) / bodies.length) },
      bombs: { sent: BOMB_CLIENTS * BOMBS_PER_CLIENT, bytes: bomb.length, statuses, healthPolls: waits.length, healthFailed, healthMaxMs: round(Math.max(...waits)), healthP50Ms: round(median(waits)) },
    };
  } finally {
    await server.stop();
  }
}

export function formatOtlpBench(result: OtlpBench): string {
  const { batch, bombs } = result;
  const answered = Object.entries(bombs.statuses).map(([status, n]) => `${n}× ${status}`).join(", ");
  return [
    `OTLP batches of ${batch.records} log records (protobuf, gzipped, ${batch.bytes.toLocaleString("en")} bytes): p50 ${batch.p50Ms} ms, p90 ${batch.p90Ms} ms per batch`,
    `health wait under OTLP bombs: max ${bombs.healthMaxMs} ms (target <= ${HEALTH_WAIT_TARGET_MS}), p50 ${bombs.healthP50Ms} ms over ${bombs.healthPolls} polls (${bombs.healthFailed} failed); ` +
      `${BOMB_CLIENTS} clients sent ${bombs.sent} bombs of ${bombs.bytes.toLocaleString("en")} bytes (10 MB of 0a 00), answered ${answered}`,
  ].join("\n");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(formatOtlpBench(await benchOtlp()));
  process.exit(0);
}
