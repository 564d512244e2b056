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
