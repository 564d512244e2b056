/** Every captured OpenTelemetry export, re-encoded as protobuf: decoded, it means what its JSON meant. */
import generated from "@opentelemetry/otlp-transformer/build/src/generated/root.js";
import { describe, expect, it } from "vitest";
import { normalizeBatch } from "./batch";
import { otlpItems, type OtlpSignal } from "./otlp";
import { hexIdsToBase64, loadOtlpCapture, otlpCaptureNames } from "./otlp-fixtures";
import { decodeOtlpProtobuf, encodeOtlpResponse } from "./otlp-protobuf";

type Message = { fromObject(o: object): object; encode(m: object): { finish(): Uint8Array }; decode(b: Uint8Array): object; toObject(m: object): object };
const collector = (generated as unknown as { opentelemetry: { proto: { collector: Record<string, { v1: Record<string, Message> }> } } }).opentelemetry.proto.collector;
const REQUEST: Record<OtlpSignal, Message> = {
  logs: collector.logs.v1.ExportLogsServiceRequest,
  traces: collector.trace.v1.ExportTraceServiceRequest,
  metrics: collector.metrics.v1.ExportMetricsServiceRequest,
};

const meaning = (signal: OtlpSignal, body: unknown, receivedAt: number) => {
  const batch = normalizeBatch("otlp", otlpItems(signal, body).items, { receivedAt });
  return { events: batch.lines.map((line) => [line.nativeType, line.event]), rejected: batch.rejected.length, dataPoints: otlpItems(signal, body).dataPoints };
};

describe("OTLP protobuf decodes to the JSON encoding's meaning", () => {
  it.each(otlpCaptureNames())("%s", (name) => {
    for (const request of loadOtlpCapture(name)) {
      const type = REQUEST[request.signal];
      const bytes = type.encode(type.fromObject(hexIdsToBase64(request.body) as object)).finish();
      const decoded = decodeOtlpProtobuf(request.signal, bytes);
      expect(meaning(request.signal, decoded, request.receivedAt), `${name} ${request.path}`).toEqual(meaning(request.signal, request.body, request.receivedAt));
    }
  });

  it("ids as hex, 64-bit integers as strings, as in JSON", () => {
    const type = REQUEST.traces;
    const body = {
      resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: "5b8efff798038103d269b633813fc60c", spanId: "eee19b7ec3c1b174", name: "s", startTimeUnixNano: "1796027080817000123", attributes: [{ key: "n", value: { intValue: "9007199254740993" } }] }] }] }],
    };
    const decoded = decodeOtlpProtobuf("traces", type.encode(type.fromObject(hexIdsToBase64(body) as object)).finish());
    expect(decoded).toEqual(body);
  });

  it("answers in protobuf: empty for success, the partial success otherwise", () => {
    expect(encodeOtlpResponse("logs", {})).toHaveLength(0);
    const response = collector.logs.v1.ExportLogsServiceResponse;
    const bytes = encodeOtlpResponse("logs", { partialSuccess: { rejectedLogRecords: 2, errorMessage: "record 1: session.id" } });
    expect(response.toObject(response.decode(bytes))).toMatchObject({ partialSuccess: { errorMessage: "record 1: session.id" } });
  });
});
