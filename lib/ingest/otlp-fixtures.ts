/** Test helper: OpenTelemetry exports captured from the real agents (lib/ingest/fixtures/otlp), one receiver-log line per request. */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { OtlpSignal } from "./otlp";

export interface CapturedExport {
  signal: OtlpSignal;
  path: string;
  /** When the receiver got it (epoch ms). */
  receivedAt: number;
  body: unknown;
}

export const otlpFixturesDir = () => path.resolve(import.meta.dirname, "fixtures", "otlp");

export function otlpCaptureNames(): string[] {
  return readdirSync(otlpFixturesDir())
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => f.replace(/\.jsonl$/, ""))
    .sort();
}

/** The requests of one capture, in arrival order, bodies as the exporter sent them. */
export function loadOtlpCapture(name: string): CapturedExport[] {
  return readFileSync(path.join(otlpFixturesDir(), `${name}.jsonl`), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as { path: string; ts_ms: number; body: unknown })
    .map((r) => ({ signal: r.path.replace(/^\/v1\//, "") as OtlpSignal, path: r.path, receivedAt: r.ts_ms, body: r.body }));
}

/** The JSON encoding's hex ids as the base64 protobufjs reads bytes from (to encode a capture as protobuf). */
export function hexIdsToBase64(value: unknown, key = ""): unknown {
  if (Array.isArray(value)) return value.map((v) => hexIdsToBase64(v));
  if (value && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, hexIdsToBase64(v, k)]));
  if (typeof value === "string" && /^(traceId|spanId|parentSpanId)$/.test(key)) return Buffer.from(value, "hex").toString("base64");
  return value;
}

/**
 * The orders a replay delivers a capture in: as captured; every trace export first (the traces
 * of a long turn arrive before its logs); and split into one request per record (each record its
 * own export, in capture order). Receive times stay in capture order: a server's clock only goes on.
 */
export const REPLAY_ORDERS = ["capture", "traces first", "one record per request"] as const;
export type ReplayOrder = (typeof REPLAY_ORDERS)[number];

export function replayOrder(requests: CapturedExport[], order: ReplayOrder): CapturedExport[] {
  if (order === "capture") return requests;
  const times = requests.map((r) => r.receivedAt);
  if (order === "traces first") {
    const reordered = [...requests.filter((r) => r.signal === "traces"), ...requests.filter((r) => r.signal !== "traces")];
    return reordered.map((r, i) => ({ ...r, receivedAt: times[i] }));
  }
  return requests.flatMap((r) => splitRequest(r));
}

const KEYS = { logs: ["resourceLogs", "scopeLogs", "logRecords"], traces: ["resourceSpans", "scopeSpans", "spans"], metrics: ["resourceMetrics", "scopeMetrics", "metrics"] } as const;

/** One export request per record, each with its resource and scope. */
function splitRequest(request: CapturedExport): CapturedExport[] {
  const [resourceKey, scopeKey, recordKey] = KEYS[request.signal];
  const body = request.body as Record<string, { resource?: unknown; [key: string]: unknown }[]> | null;
  const out: CapturedExport[] = [];
  for (const resource of body?.[resourceKey] ?? []) {
    for (const scope of (resource[scopeKey] as Record<string, unknown>[] | undefined) ?? []) {
      for (const record of (scope[recordKey] as unknown[] | undefined) ?? []) {
        out.push({ ...request, body: { [resourceKey]: [{ ...resource, [scopeKey]: [{ ...scope, [recordKey]: [record] }] }] } });
      }
    }
  }
  return out;
}

/**
 * The capture as if it had been recorded `byMs` later: receive times, every `…UnixNano` time
 * (0 stays unset) and `event.timestamp` attributes moved alike, so a live server receives it as
 * it happened rather than long after (when its watchdog would already have ended what it shows).
 */
export function shiftedCapture(requests: CapturedExport[], byMs: number): CapturedExport[] {
  const nanos = BigInt(Math.round(byMs)) * 1_000_000n;
  const shift = (value: unknown, key: string | null): unknown => {
    if (Array.isArray(value)) return value.map((v) => shift(v, null));
    if (typeof value === "object" && value !== null) {
      const o = value as Record<string, unknown>;
      if (o.key === "event.timestamp" && typeof o.value === "object" && o.value !== null && typeof (o.value as { stringValue?: unknown }).stringValue === "string") {
        return { ...o, value: { stringValue: new Date(Date.parse((o.value as { stringValue: string }).stringValue) + byMs).toISOString() } };
      }
      return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, shift(v, k)]));
    }
    if (key?.endsWith("UnixNano") && (typeof value === "string" || typeof value === "number") && String(value) !== "0") return String(BigInt(value) + nanos);
    return value;
  };
  return requests.map((r) => ({ ...r, receivedAt: r.receivedAt + byMs, body: shift(r.body, null) }));
}
