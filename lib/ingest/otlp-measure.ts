/**
 * Measures an OTLP export request against the bounds of limits.ts before anything decodes it:
 * a body of a few kilobytes may inflate to megabytes of tiny protobuf fields, or JSON values,
 * each of which would become an object. The protobuf walk reads the wire format as protobufjs
 * would (tags, lengths, known fields by their declared wire type) and counts, without making
 * anything per value:
 * - records (log records, spans, metric data points) and the resource, scope and metric entries
 *   holding them: at most MAX_ITEMS of each kind;
 * - values: every field occurrence and every element of a packed list, at most MAX_OTLP_VALUES
 *   in the export and MAX_OTLP_RECORD_VALUES within one record (or one resource or scope);
 * - nesting: messages at most MAX_DEPTH deep.
 * The JSON scan counts values (array elements and object members) and nesting the same way.
 * A body past a bound yields the bound it passed (413); bytes that are not a well-formed export
 * throw OtlpMalformedError (400). Pure: no I/O.
 */
import { MAX_DEPTH, MAX_ITEMS, MAX_OTLP_RECORD_VALUES, MAX_OTLP_VALUES } from "./limits";

/** Which bound a body passed, the limit, and what was counted when the walk stopped. */
export interface OtlpOverBound {
  bound: "records" | "values" | "record values" | "depth";
  limit: number;
  counted: number;
  /** What was counted, in the export's own words ("logRecords", "values in one span", …). */
  what: string;
}

export class OtlpMalformedError extends Error {}

/** A bound passed: thrown inside the walk, caught at its top. */
class Over {
  constructor(readonly bound: OtlpOverBound) {}
}

// Wire types (protobuf encoding).
const VARINT = 0;
const I64 = 1;
const LEN = 2;
const I32 = 5;
/** A packed repeated scalar (also accepted element by element): elements of 8 bytes, or varints. */
const PACKED_I64 = 8;
const PACKED_VARINT = 9;
type Scalar = typeof VARINT | typeof I64 | typeof LEN | typeof I32 | typeof PACKED_I64 | typeof PACKED_VARINT;

/** A message type: what each field number holds. */
interface Shape {
  name: string;
  fields: (Scalar | Shape | undefined)[];
  /** Entries of this type are counted against MAX_ITEMS, under this name. */
  counted?: string;
  /** A record (or a resource or scope): the values within it are counted against MAX_OTLP_RECORD_VALUES. */
  holder?: string;
}

function shape(name: string, spec: Record<number, Scalar | Shape>, extra: Partial<Shape> = {}): Shape {
  const fields: (Scalar | Shape | undefined)[] = [];
  for (const [number, field] of Object.entries(spec)) fields[Number(number)] = field;
  return { name, fields, ...extra };
}

// The OTLP messages (opentelemetry-proto, as @opentelemetry/otlp-transformer's generated
// decoders read them; otlp-measure.test.ts checks this table against their encoders).
const AnyValue = shape("AnyValue", { 1: LEN, 2: VARINT, 3: VARINT, 4: I64, 7: LEN });
const KeyValue = shape("KeyValue", { 1: LEN, 2: AnyValue });
AnyValue.fields[5] = shape("ArrayValue", { 1: AnyValue });
AnyValue.fields[6] = shape("KeyValueList", { 1: KeyValue });
const Resource = shape("Resource", { 1: KeyValue, 2: VARINT, 3: shape("EntityRef", { 1: LEN, 2: LEN, 3: LEN, 4: LEN }) }, { holder: "resource" });
const Scope = shape("InstrumentationScope", { 1: LEN, 2: LEN, 3: KeyValue, 4: VARINT }, { holder: "scope" });
const Exemplar = shape("Exemplar", { 2: I64, 3: I64, 4: LEN, 5: LEN, 6: I64, 7: KeyValue });
const point = (name: string, spec: Record<number, Scalar | Shape>) => shape(name, spec, { counted: "data points", holder: "data point" });
const NumberDataPoint = point("NumberDataPoint", { 2: I64, 3: I64, 4: I64, 5: Exemplar, 6: I64, 7: KeyValue, 8: VARINT });
const HistogramDataPoint = point("HistogramDataPoint", { 2: I64, 3: I64, 4: I64, 5: I64, 6: PACKED_I64, 7: PACKED_I64, 8: Exemplar, 9: KeyValue, 10: VARINT, 11: I64, 12: I64 });
const Buckets = shape("Buckets", { 1: VARINT, 2: PACKED_VARINT });
const ExponentialHistogramDataPoint = point("ExponentialHistogramDataPoint", {
  1: KeyValue, 2: I64, 3: I64, 4: I64, 5: I64, 6: VARINT, 7: I64, 8: Buckets, 9: Buckets, 10: VARINT, 11: Exemplar, 12: I64, 13: I64, 14: I64,
});
const SummaryDataPoint = point("SummaryDataPoint", { 2: I64, 3: I64, 4: I64, 5: I64, 6: shape("ValueAtQuantile", { 1: I64, 2: I64 }), 7: KeyValue, 8: VARINT });
const Metric = shape(
  "Metric",
  {
    1: LEN, 2: LEN, 3: LEN,
    5: shape("Gauge", { 1: NumberDataPoint }),
    7: shape("Sum", { 1: NumberDataPoint, 2: VARINT, 3: VARINT }),
    9: shape("Histogram", { 1: HistogramDataPoint, 2: VARINT }),
    10: shape("ExponentialHistogram", { 1: ExponentialHistogramDataPoint, 2: VARINT }),
    11: shape("Summary", { 1: SummaryDataPoint }),
    12: KeyValue,
  },
  { counted: "metrics" },
);
const LogRecord = shape("LogRecord", { 1: I64, 2: VARINT, 3: LEN, 5: AnyValue, 6: KeyValue, 7: VARINT, 8: I32, 9: LEN, 10: LEN, 11: I64, 12: LEN }, { counted: "logRecords", holder: "log record" });
const Span = shape(
  "Span",
  {
    1: LEN, 2: LEN, 3: LEN, 4: LEN, 5: LEN, 6: VARINT, 7: I64, 8: I64, 9: KeyValue, 10: VARINT,
    11: shape("Span.Event", { 1: I64, 2: LEN, 3: KeyValue, 4: VARINT }),
    12: VARINT,
    13: shape("Span.Link", { 1: LEN, 2: LEN, 3: LEN, 4: KeyValue, 5: VARINT, 6: I32 }),
    14: VARINT,
    15: shape("Status", { 2: LEN, 3: VARINT }),
    16: I32,
  },
  { counted: "spans", holder: "span" },
);
/** An export request: resource entries holding scope entries holding records. */
function request(name: string, resource: string, scope: string, record: Shape): Shape {
  // Counted under their names in the JSON encoding: "resourceLogs", "scopeLogs".
  const scopeEntry = shape(scope, { 1: Scope, 2: record, 3: LEN }, { counted: lowerFirst(scope) });
  return shape(name, { 1: shape(resource, { 1: Resource, 2: scopeEntry, 3: LEN }, { counted: lowerFirst(resource) }) });
}

const lowerFirst = (name: string) => name[0].toLowerCase() + name.slice(1);

/** The request message of each signal. */
export const OTLP_REQUESTS = {
  logs: request("ExportLogsServiceRequest", "ResourceLogs", "ScopeLogs", LogRecord),
  traces: request("ExportTraceServiceRequest", "ResourceSpans", "ScopeSpans", Span),
  metrics: request("ExportMetricsServiceRequest", "ResourceMetrics", "ScopeMetrics", Metric),
} as const;

/** The walk's counters, reset for each body: one object per call, nothing per value. */
interface Walk {
  bytes: Uint8Array;
  pos: number;
  values: number;
  /** Values of the record (resource, scope) being walked; -1 outside any. */
  recordValues: number;
  holder: string;
  counts: Map<string, number>;
}

/** Walks a protobuf export request of `signal`; the first bound it passes, else null. Throws OtlpMalformedError. */
export function measureOtlpProtobuf(signal: keyof typeof OTLP_REQUESTS, bytes: Uint8Array): OtlpOverBound | null {
  const walk: Walk = { bytes, pos: 0, values: 0, recordValues: -1, holder: "", counts: new Map() };
  try {
    walkMessage(walk, bytes.length, OTLP_REQUESTS[signal], 1);
    return null;
  } catch (error) {
    if (error instanceof Over) return error.bound;
    throw error;
  }
}

function malformed(walk: Walk, shape: Shape, detail: string): never {
  throw new OtlpMalformedError(`${detail} in ${shape.name} at byte ${walk.pos}`);
}

/** A varint's low 32 bits, unsigned (as protobufjs reads tags and lengths); up to 10 bytes. */
function varint32(walk: Walk, end: number, shape: Shape): number {
  const { bytes } = walk;
  let value = 0;
  for (let i = 0; i < 10; i++) {
    if (walk.pos >= end) malformed(walk, shape, "a truncated varint");
    const byte = bytes[walk.pos++];
    if (i < 5) value = (value | ((byte & 0x7f) << (7 * i))) >>> 0;
    if (byte < 0x80) return value;
  }
  malformed(walk, shape, "a varint longer than 10 bytes");
}

/** Recursion is bounded: a message deeper than MAX_DEPTH stops the walk before it is entered. */
function walkMessage(walk: Walk, end: number, shape: Shape, depth: number): void {
  while (walk.pos < end) {
    const tag = varint32(walk, end, shape);
    const number = tag >>> 3;
    const wire = tag & 7;
    if (number === 0) malformed(walk, shape, "field number 0");
    count(walk, 1);
    const field = shape.fields[number];
    const expected = field === undefined ? wire : typeof field === "object" ? LEN : field === PACKED_I64 ? (wire === LEN ? LEN : I64) : field === PACKED_VARINT ? (wire === LEN ? LEN : VARINT) : field;
    if (wire !== expected) malformed(walk, shape, `field ${number} with wire type ${wire} (expected ${expected})`);
    switch (wire) {
      case VARINT:
        varint32(walk, end, shape);
        break;
      case I64:
        skip(walk, end, shape, 8);
        break;
      case I32:
        skip(walk, end, shape, 4);
        break;
      case LEN: {
        const length = varint32(walk, end, shape);
        if (length > end - walk.pos) malformed(walk, shape, `field ${number} longer than its message`);
        const stop = walk.pos + length;
        if (typeof field === "object") walkChild(walk, stop, field, depth + 1);
        else if (field === PACKED_I64) count(walk, Math.floor(length / 8));
        else if (field === PACKED_VARINT) count(walk, packedVarints(walk.bytes, walk.pos, stop));
        walk.pos = stop;
        break;
      }
      default:
        malformed(walk, shape, `field ${number} with wire type ${wire}, which OTLP never uses`);
    }
  }
}

function walkChild(walk: Walk, stop: number, child: Shape, depth: number): void {
  if (depth > MAX_DEPTH) throw new Over({ bound: "depth", limit: MAX_DEPTH, counted: depth, what: `messages nested (${child.name})` });
  if (child.counted) {
    const counted = (walk.counts.get(child.counted) ?? 0) + 1;
    walk.counts.set(child.counted, counted);
    if (counted > MAX_ITEMS) throw new Over({ bound: "records", limit: MAX_ITEMS, counted, what: child.counted });
  }
  if (!child.holder) return walkMessage(walk, stop, child, depth);
  // Records, resources and scopes never hold one another: no outer count to restore but "none".
  walk.recordValues = 0;
  walk.holder = child.holder;
  walkMessage(walk, stop, child, depth);
  walk.recordValues = -1;
}

function count(walk: Walk, values: number): void {
  walk.values += values;
  if (walk.values > MAX_OTLP_VALUES) throw new Over({ bound: "values", limit: MAX_OTLP_VALUES, counted: walk.values, what: "values in the export" });
  if (walk.recordValues < 0) return;
  walk.recordValues += values;
  if (walk.recordValues > MAX_OTLP_RECORD_VALUES) throw new Over({ bound: "record values", limit: MAX_OTLP_RECORD_VALUES, counted: walk.recordValues, what: `values in one ${walk.holder}` });
}

function skip(walk: Walk, end: number, shape: Shape, bytes: number): void {
  if (bytes > end - walk.pos) malformed(walk, shape, "a truncated fixed-size field");
  walk.pos += bytes;
}

/** Varints in a packed list: the bytes that end one (high bit clear). */
function packedVarints(bytes: Uint8Array, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) if (bytes[i] < 0x80) n++;
  return n;
}

/**
 * Scans JSON text (an OTLP JSON export) for its values and nesting, without parsing it: each
 * array element and object member is a value, at most MAX_OTLP_VALUES; objects and arrays at
 * most MAX_DEPTH deep. Text that is not JSON is left for JSON.parse to refuse, naming where.
 */
export function measureJson(text: string): OtlpOverBound | null {
  let depth = 0;
  let values = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: skipped whole, to the first quote not escaped by an odd run of backslashes.
      for (;;) {
        const close = text.indexOf('"', i + 1);
        if (close < 0) return null;
        let slashes = 0;
        while (text.charCodeAt(close - 1 - slashes) === 0x5c) slashes++;
        i = close;
        if (slashes % 2 === 0) break;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > MAX_DEPTH) return { bound: "depth", limit: MAX_DEPTH, counted: depth, what: "JSON objects and arrays nested" };
      // An array's or object's first value (an empty one counts one: harmless).
      if (++values > MAX_OTLP_VALUES) return { bound: "values", limit: MAX_OTLP_VALUES, counted: values, what: "values in the export" };
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
    } else if (c === 0x2c) {
      if (++values > MAX_OTLP_VALUES) return { bound: "values", limit: MAX_OTLP_VALUES, counted: values, what: "values in the export" };
    }
  }
  return null;
}

/** The refusal's words: which bound, its limit, and what was counted. */
export function describeOverBound(over: OtlpOverBound): string {
  const counted = over.bound === "depth" ? `${over.what} ${over.counted} deep` : `${over.counted} ${over.what} counted before stopping`;
  const names = { records: "MAX_ITEMS", values: "MAX_OTLP_VALUES", "record values": "MAX_OTLP_RECORD_VALUES", depth: "MAX_DEPTH" } as const;
  return `The export passes the bound on ${over.bound} (${names[over.bound]} = ${over.limit}): ${counted}`;
}
