/** The OTLP record as the agent files read it (otlp.ts flattens requests into these), and attribute decoding. */
import type { NormalizedEvent } from "./types";
import { isObject } from "./util";

export type Attrs = Record<string, unknown>;

/** One flattened record: what is stored as its raw payload. */
export interface OtlpItem {
  signal: "logs" | "traces";
  resource: Attrs;
  scope: string | null;
  record: unknown;
}

export interface OtlpEventView {
  name: string | null;
  at: number | null;
  attrs: Attrs;
}

/** A record as the agent files read it: attributes decoded, times in epoch ms. */
export interface OtlpRecord {
  index: number;
  signal: "logs" | "traces";
  service: string | null;
  resource: Attrs;
  /** Log: `event.name` (else the body); span: its name. */
  name: string | null;
  attrs: Attrs;
  /** Log: its time, falling back to `event.timestamp`, then the observed time; span: its end. */
  at: number | null;
  traceId: string | null;
  /** Span only. */
  startAt: number | null;
  events: OtlpEventView[];
  status: { code: number | null; message: string | null } | null;
}

/** What an agent file makes of a record: events (several for one record when it tells several facts). */
export type OtlpOutput = { index: number; events: NormalizedEvent[]; nativeType: string | null } | { index: number; error: string };

export interface OtlpAgent {
  matches(service: string): boolean;
  read(records: OtlpRecord[], receivedAt: number): OtlpOutput[];
}

/** An OTLP AnyValue → plain JSON (ints sent as strings stay strings; see intOf). */
export function anyValue(value: unknown): unknown {
  if (!isObject(value)) return null;
  if ("stringValue" in value) return value.stringValue;
  if ("boolValue" in value) return value.boolValue;
  if ("intValue" in value) return value.intValue;
  if ("doubleValue" in value) return value.doubleValue;
  if ("bytesValue" in value) return value.bytesValue;
  if (isObject(value.arrayValue)) return Array.isArray(value.arrayValue.values) ? value.arrayValue.values.map(anyValue) : [];
  if (isObject(value.kvlistValue)) return attributes(value.kvlistValue.values);
  return null;
}

export function attributes(list: unknown): Attrs {
  const out: Attrs = {};
  if (!Array.isArray(list)) return out;
  for (const kv of list) if (isObject(kv) && typeof kv.key === "string") out[kv.key] = anyValue(kv.value);
  return out;
}

/** An integer attribute, sent as a JSON number or (Codex, proto3 JSON int64) a string of digits. */
export function intOf(value: unknown): number | null {
  if (typeof value === "number" && Number.isSafeInteger(value)) return value;
  if (typeof value === "string" && /^-?\d{1,15}$/.test(value.trim())) return Number(value.trim());
  return null;
}

/** `timeUnixNano` (a string of digits, or a number) → epoch ms; 0 means unset. */
export function nanosToMs(value: unknown): number | null {
  if (typeof value === "string" && /^\d{1,30}$/.test(value)) {
    const nanos = BigInt(value);
    return nanos === 0n ? null : Number(nanos / 1000n) / 1000;
  }
  if (typeof value === "number" && Number.isFinite(value) && value > 0) return value / 1e6;
  return null;
}

