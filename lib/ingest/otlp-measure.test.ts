/** The walk that bounds an OTLP export before it is decoded: every bound, the captures within them, and its table against the generated decoders. */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import generated from "@opentelemetry/otlp-transformer/build/src/generated/root.js";
import { describe, expect, it } from "vitest";
import { MAX_DEPTH, MAX_ITEMS, MAX_OTLP_RECORD_VALUES, MAX_OTLP_VALUES } from "./limits";
import type { OtlpSignal } from "./otlp";
import { hexIdsToBase64, loadOtlpCapture, otlpCaptureNames } from "./otlp-fixtures";
import { measureJson, measureOtlpProtobuf, OTLP_REQUESTS, OtlpMalformedError } from "./otlp-measure";

type Message = { fromObject(o: object): object; encode(m: object): { finish(): Uint8Array } };
const collector = (generated as unknown as { opentelemetry: { proto: { collector: Record<string, { v1: Record<string, Message> }> } } }).opentelemetry.proto.collector;
const REQUEST: Record<OtlpSignal, Message> = {
  logs: collector.logs.v1.ExportLogsServiceRequest,
  traces: collector.trace.v1.ExportTraceServiceRequest,
  metrics: collector.metrics.v1.ExportMetricsServiceRequest,
};
const encode = (signal: OtlpSignal, body: object) => REQUEST[signal].encode(REQUEST[signal].fromObject(body)).finish();

/** Protobuf by hand: a length-delimited field `number` holding `parts`. */
function varint(n: number): number[] {
  const out: number[] = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}
function field(number: number, ...parts: Uint8Array[]): Uint8Array {
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from([...varint((number << 3) | 2), ...varint(body.length)]), body]);
}
const repeat = (part: Uint8Array, times: number) => Buffer.concat(Array<Uint8Array>(times).fill(part));
const EMPTY = new Uint8Array();

/** The bomb of the issue: 10 MB of the bytes 0a 00, an export of five million empty resourceLogs. */
const BOMB = Buffer.from(new Uint8Array(10_000_000).map((_, i) => (i % 2 === 0 ? 0x0a : 0x00)));

describe("measureOtlpProtobuf", () => {
  it("stops the bomb at MAX_ITEMS resource entries, having walked no further than that", () => {
    for (const signal of ["logs", "traces", "metrics"] as const) {
      const over = measureOtlpProtobuf(signal, BOMB);
      expect(over).toMatchObject({ bound: "records", limit: MAX_ITEMS, counted: MAX_ITEMS + 1 });
      expect(over?.what).toBe({ logs: "resourceLogs", traces: "resourceSpans", metrics: "resourceMetrics" }[signal]);
    }
  });

  it("takes every captured export, and MAX_ITEMS of their records in one", () => {
    const records = { logs: [] as unknown[], traces: [] as unknown[] };
    const keys = { logs: ["resourceLogs", "scopeLogs", "logRecords"], traces: ["resourceSpans", "scopeSpans", "spans"] } as const;
    for (const name of otlpCaptureNames()) {
      for (const request of loadOtlpCapture(name)) {
        const body = hexIdsToBase64(request.body) as Record<string, Record<string, Record<string, unknown[]>[]>[]>;
        expect(measureOtlpProtobuf(request.signal, encode(request.signal, body)), `${name} ${request.path}`).toBeNull();
        if (request.signal === "metrics") continue;
        const [resourceKey, scopeKey, recordKey] = keys[request.signal];
        // Each record with its resource, as it would travel in an export of its own.
        for (const resource of body[resourceKey]) for (const scope of resource[scopeKey]) for (const record of scope[recordKey] ?? []) records[request.signal].push({ ...resource, [scopeKey]: [{ ...scope, [recordKey]: [record] }] });
      }
    }
    for (const signal of ["logs", "traces"] as const) {
      const full = { [keys[signal][0]]: Array.from({ length: MAX_ITEMS }, (_, i) => records[signal][i % records[signal].length]) };
      expect(measureOtlpProtobuf(signal, encode(signal, full)), `${signal}: MAX_ITEMS captured records`).toBeNull();
    }
  });

  it("counts log records, spans, span events' values and metric data points", () => {
    const logs = { resourceLogs: [{ scopeLogs: [{ logRecords: Array.from({ length: MAX_ITEMS + 1 }, () => ({ severityText: "x" })) }] }] };
    expect(measureOtlpProtobuf("logs", encode("logs", logs))).toMatchObject({ bound: "records", counted: MAX_ITEMS + 1, what: "logRecords" });
    const spans = { resourceSpans: [{ scopeSpans: [{ spans: Array.from({ length: MAX_ITEMS + 1 }, () => ({ name: "s" })) }] }] };
    expect(measureOtlpProtobuf("traces", encode("traces", spans))).toMatchObject({ bound: "records", what: "spans" });
    const points = { resourceMetrics: [{ scopeMetrics: [{ metrics: [{ name: "m", gauge: { dataPoints: Array.from({ length: MAX_ITEMS + 1 }, () => ({ asDouble: 1 })) } }] }] }] };
    expect(measureOtlpProtobuf("metrics", encode("metrics", points))).toMatchObject({ bound: "records", what: "data points" });
    const events = { resourceSpans: [{ scopeSpans: [{ spans: [{ name: "s", events: Array.from({ length: MAX_OTLP_RECORD_VALUES / 2 }, () => ({ name: "e" })) }] }] }] };
    expect(measureOtlpProtobuf("traces", encode("traces", events))).toMatchObject({ bound: "record values", limit: MAX_OTLP_RECORD_VALUES, what: "values in one span" });
  });

  it("bounds the values of one record, of a resource, and of the whole export", () => {
    // Empty attributes (field 6 of a log record, 1 of a resource): two bytes each.
    const record = field(2, repeat(field(6), MAX_OTLP_RECORD_VALUES + 1));
    expect(measureOtlpProtobuf("logs", field(1, field(2, record)))).toMatchObject({ bound: "record values", counted: MAX_OTLP_RECORD_VALUES + 1, what: "values in one log record" });
    expect(measureOtlpProtobuf("logs", field(1, field(1, repeat(field(1), MAX_OTLP_RECORD_VALUES + 1))))).toMatchObject({ bound: "record values", what: "values in one resource" });
    const perRecord = Math.floor(MAX_OTLP_RECORD_VALUES / 2);
    const records = repeat(field(2, repeat(field(6), perRecord)), Math.ceil(MAX_OTLP_VALUES / perRecord) + 1);
    expect(measureOtlpProtobuf("logs", field(1, field(2, records)))).toMatchObject({ bound: "values", limit: MAX_OTLP_VALUES, counted: MAX_OTLP_VALUES + 1 });
  });

  it("counts every element of a packed list", () => {
    const bounds = Array.from({ length: MAX_OTLP_RECORD_VALUES + 1 }, (_, i) => i);
    const histogram = { resourceMetrics: [{ scopeMetrics: [{ metrics: [{ name: "h", histogram: { dataPoints: [{ explicitBounds: bounds }] } }] }] }] };
    expect(measureOtlpProtobuf("metrics", encode("metrics", histogram))).toMatchObject({ bound: "record values", what: "values in one data point" });
    const buckets = { resourceMetrics: [{ scopeMetrics: [{ metrics: [{ name: "e", exponentialHistogram: { dataPoints: [{ positive: { bucketCounts: bounds } }] } }] }] }] };
    expect(measureOtlpProtobuf("metrics", encode("metrics", buckets))).toMatchObject({ bound: "record values" });
  });

  it("stops values nested deeper than MAX_DEPTH", () => {
    // A log record's body: AnyValue → ArrayValue → AnyValue …, two messages a level.
    let value: Uint8Array = EMPTY;
    for (let i = 0; i < MAX_DEPTH; i++) value = field(5, field(1, value));
    expect(measureOtlpProtobuf("logs", field(1, field(2, field(2, field(5, value)))))).toMatchObject({ bound: "depth", limit: MAX_DEPTH, counted: MAX_DEPTH + 1 });
  });

  it("refuses bytes that are not an export, where protobufjs would read them otherwise", () => {
    for (const bytes of [
      Buffer.from([0x0a, 0x05, 0x00]), // longer than the body
      Buffer.from([0x08, 0x01]), // resourceLogs as a varint
      Buffer.from([0x00]), // field 0
      Buffer.from([0x0b]), // a group
      Buffer.from([0x0a, 0x02, 0x12, 0x05]), // a scope entry longer than its resource entry
      Buffer.from([0x0a, 0x02, 0x12, 0x00, 0x0a, 0x80]), // a truncated length
      Buffer.from([0x0a, 0x04, 0x12, 0x02, 0x12, 0x09]), // a log record's severityText as a fixed64
    ]) {
      expect(() => measureOtlpProtobuf("logs", bytes), bytes.toString("hex")).toThrow(OtlpMalformedError);
    }
    // Unknown fields are skipped whatever their wire type, as protobufjs skips them.
    expect(measureOtlpProtobuf("logs", Buffer.from([0x78, 0x01, 0x81, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 0x7a, 0x01, 0xff]))).toBeNull();
  });

  it("reads every field as the generated decoders do (wire type and message, field by field)", () => {
    // The generated encoders name each field's number, wire type and message type.
    const source = readFileSync(createRequire(import.meta.url).resolve("@opentelemetry/otlp-transformer/build/src/generated/root.js"), "utf8");
    const generatedFields = new Map<string, string[]>();
    for (const [, name, body] of source.matchAll(/(\w+)\.encode = function encode\(message, writer\) \{([\s\S]*?)\n\s*return writer;/g)) {
        const fields = body.split("\n").flatMap((line) => {
        const [, id, wire] = /id (\d+), wireType (\d+)/.exec(line) ?? [];
        const type = /\$root\.[\w.]+\.(\w+)\.encode/.exec(line)?.[1];
        return id ? [`${id}:${wire}${type ? `=${type}` : ""}`] : [];
      });
      generatedFields.set(name, fields.sort());
    }
    const seen = new Set<string>();
    const visit = (shape: (typeof OTLP_REQUESTS)["logs"]) => {
      if (seen.has(shape.name)) return;
      seen.add(shape.name);
      const fields = shape.fields.flatMap((f, n) => {
        if (f === undefined) return [];
        if (typeof f === "object") {
          visit(f);
          return [`${n}:2=${generatedName(f.name)}`];
        }
        return [`${n}:${f === 8 || f === 9 ? 2 : f}`];
      });
      expect(fields.sort(), shape.name).toEqual(generatedFields.get(generatedName(shape.name)));
    };
    for (const request of Object.values(OTLP_REQUESTS)) visit(request);
    expect(seen.size).toBeGreaterThan(25);
  });
});

/** The walk's names for the generated messages: "Span.Event" is "Event". */
const generatedName = (name: string) => name.split(".").at(-1)!;

describe("measureJson", () => {
  it("bounds values and nesting before parsing, counting neither inside strings", () => {
    const bomb = `{"resourceLogs":[${"{},".repeat(MAX_OTLP_VALUES)}{}]}`;
    expect(measureJson(bomb)).toMatchObject({ bound: "values", limit: MAX_OTLP_VALUES, counted: MAX_OTLP_VALUES + 1 });
    expect(measureJson(`${"[".repeat(MAX_DEPTH + 1)}${"]".repeat(MAX_DEPTH + 1)}`)).toMatchObject({ bound: "depth", counted: MAX_DEPTH + 1 });
    expect(measureJson(`${"[".repeat(MAX_DEPTH)}${"]".repeat(MAX_DEPTH)}`)).toBeNull();
    const text = `"a \\" ${",[{".repeat(MAX_OTLP_VALUES)} \\\\"`;
    expect(measureJson(`{"k":${text}}`)).toBeNull();
    for (const name of otlpCaptureNames()) for (const request of loadOtlpCapture(name)) expect(measureJson(JSON.stringify(request.body))).toBeNull();
  });
});
