/**
 * OTLP/HTTP protobuf (`application/x-protobuf`) ↔ the OTLP JSON encoding otlp.ts reads.
 *
 * Decoding is protobufjs running the code it generated from the published OTLP .proto
 * definitions, as @opentelemetry/otlp-transformer 0.205.0 ships it (pinned exactly: later
 * versions dropped the generated decoders for their own encoder). Its object form differs from
 * the JSON encoding in what toJsonShape() mends: trace and span ids are hex in JSON (base64
 * here), 64-bit integers are decimal strings, enums numbers; zero values are left out, as a
 * JSON exporter may too. Pure: no I/O.
 */
import generated from "@opentelemetry/otlp-transformer/build/src/generated/root.js";
import type { OtlpSignal } from "./otlp";

interface Writer {
  finish(): Uint8Array;
}
interface MessageType {
  decode(bytes: Uint8Array): object;
  toObject(message: object, options: object): Record<string, unknown>;
  fromObject(object: object): object;
  encode(message: object): Writer;
}
type Service = { v1: Record<string, MessageType> };
const collector = (generated as unknown as { opentelemetry: { proto: { collector: { logs: Service; trace: Service; metrics: Service } } } }).opentelemetry.proto.collector;

const MESSAGES: Record<OtlpSignal, { request: MessageType; response: MessageType }> = {
  logs: { request: collector.logs.v1.ExportLogsServiceRequest, response: collector.logs.v1.ExportLogsServiceResponse },
  traces: { request: collector.trace.v1.ExportTraceServiceRequest, response: collector.trace.v1.ExportTraceServiceResponse },
  metrics: { request: collector.metrics.v1.ExportMetricsServiceRequest, response: collector.metrics.v1.ExportMetricsServiceResponse },
};

/** The media type of the protobuf encoding (requests and their answers). */
export const OTLP_PROTOBUF = "application/x-protobuf";

/** The ids the JSON encoding writes as hex (every other bytes field stays base64). */
const HEX_IDS = new Set(["traceId", "spanId", "parentSpanId"]);

const TO_OBJECT = { longs: String, enums: Number, bytes: String, defaults: false, arrays: false, objects: false, oneofs: false };

function toJsonShape(value: unknown, key = ""): unknown {
  if (Array.isArray(value)) return value.map((item) => toJsonShape(item));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toJsonShape(v, k);
    return out;
  }
  if (typeof value === "string" && HEX_IDS.has(key)) return Buffer.from(value, "base64").toString("hex");
  return value;
}

/** A protobuf export request → its JSON encoding; throws when the bytes are not one. */
export function decodeOtlpProtobuf(signal: OtlpSignal, bytes: Uint8Array): unknown {
  const { request } = MESSAGES[signal];
  return toJsonShape(request.toObject(request.decode(bytes), TO_OBJECT));
}

/** An export response (`{}` or `{ partialSuccess }`, as in JSON) → protobuf bytes. */
export function encodeOtlpResponse(signal: OtlpSignal, response: object): Uint8Array {
  const { response: type } = MESSAGES[signal];
  return type.encode(type.fromObject(response)).finish();
}
