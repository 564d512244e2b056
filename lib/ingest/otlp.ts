/**
 * OpenTelemetry (OTLP/HTTP, JSON encoding) → RadarEvents.
 *
 * An export request is flattened into items, one per log record or span, each carrying its
 * resource and scope (`otlpItems`), so every record is bounded, masked, keyed and stored on its
 * own like a native line. The agent is told by the resource's `service.name`; each agent's
 * records are read by its own file (otlp-claude.ts, otlp-codex.ts); any other service's spans
 * that follow the GenAI semantic conventions by otlp-genai.ts. Records of an unknown service or of
 * no meaning to the radar are counted as ignored, never stored. Pure: no I/O, no clock.
 */
import { deriveKey, keyMaterial, statedTime } from "./key";
import { claudeOtlp } from "./otlp-claude";
import { codexOtlp } from "./otlp-codex";
import { genAiOtlp, isGenAiSpan } from "./otlp-genai";
import { anyValue, attributes, intOf, nanosToMs, type OtlpAgent, type OtlpItem, type OtlpOutput, type OtlpRecord } from "./otlp-record";
import { parseEventTime } from "./time";
import { OTLP_FORMAT, type BatchContext, type BatchResult, type NormalizedEvent, type NormalizedLine, type RejectedItem } from "./types";
import { isObject, nonEmptyStr, type JsonObject } from "./util";

/** The signals an exporter sends, each to `<endpoint>/v1/<signal>`. */
export const OTLP_SIGNALS = ["logs", "traces", "metrics"] as const;
export type OtlpSignal = (typeof OTLP_SIGNALS)[number];

const AGENTS: OtlpAgent[] = [claudeOtlp, codexOtlp];

/** The time a flattened record states (its own, else a span's end, else the observed time), for its key (key.ts). */
function recordTime(item: unknown): number {
  const record = isObject(item) && isObject(item.record) ? item.record : null;
  if (!record) return 0;
  return statedTime(nanosToMs(record.timeUnixNano) ?? nanosToMs(record.endTimeUnixNano) ?? nanosToMs(record.observedTimeUnixNano));
}

function plausible(ms: number | null | undefined, receivedAt: number): number | null {
  if (ms === null || ms === undefined) return null;
  const t = parseEventTime(ms, receivedAt);
  return t.ok ? t.at : null;
}

function isoTime(value: unknown, receivedAt: number): number | null {
  if (typeof value !== "string") return null;
  const t = parseEventTime(value, receivedAt);
  return t.ok ? t.at : null;
}

/** An export request body → one item per log record or span; data points of metrics are only counted. */
export function otlpItems(signal: OtlpSignal, body: unknown): { items: OtlpItem[]; dataPoints: number } {
  const items: OtlpItem[] = [];
  let dataPoints = 0;
  if (!isObject(body)) return { items, dataPoints };
  const [resourceKey, scopeKey, recordKey] =
    signal === "logs" ? ["resourceLogs", "scopeLogs", "logRecords"] : signal === "traces" ? ["resourceSpans", "scopeSpans", "spans"] : ["resourceMetrics", "scopeMetrics", "metrics"];
  for (const r of asArray(body[resourceKey])) {
    const resource = attributes(isObject(r) && isObject(r.resource) ? r.resource.attributes : null);
    for (const s of asArray(isObject(r) ? r[scopeKey] : null)) {
      const scope = isObject(s) && isObject(s.scope) ? nonEmptyStr(s.scope.name) : null;
      for (const record of asArray(isObject(s) ? s[recordKey] : null)) {
        if (signal === "metrics") dataPoints += metricPoints(record);
        else items.push({ signal, resource, scope, record });
      }
    }
  }
  return { items, dataPoints };
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function metricPoints(metric: unknown): number {
  if (!isObject(metric)) return 1;
  for (const kind of ["sum", "gauge", "histogram", "exponentialHistogram", "summary"]) {
    const data = metric[kind];
    if (isObject(data) && Array.isArray(data.dataPoints)) return data.dataPoints.length;
  }
  return 0;
}

/** One item → the view the agent files read; null when the item is not an OTLP record at all. */
function view(item: unknown, index: number, receivedAt: number): OtlpRecord | string {
  if (!isObject(item) || (item.signal !== "logs" && item.signal !== "traces") || !isObject(item.record)) return "expected an OTLP log record or span object";
  const record = item.record;
  const resource = isObject(item.resource) ? item.resource : {};
  const attrs = attributes(record.attributes);
  const signal: "logs" | "traces" = item.signal;
  const base = { index, signal, service: nonEmptyStr(resource["service.name"]), resource, attrs, traceId: nonEmptyStr(record.traceId) };
  if (item.signal === "logs") {
    const body = anyValue(record.body);
    const at =
      plausible(nanosToMs(record.timeUnixNano), receivedAt) ??
      isoTime(attrs["event.timestamp"], receivedAt) ??
      plausible(nanosToMs(record.observedTimeUnixNano), receivedAt);
    return { ...base, name: nonEmptyStr(attrs["event.name"]) ?? nonEmptyStr(body), at, startAt: null, events: [], status: null };
  }
  const events = asArray(record.events)
    .filter(isObject)
    .map((e: JsonObject) => ({ name: nonEmptyStr(e.name), at: plausible(nanosToMs(e.timeUnixNano), receivedAt), attrs: attributes(e.attributes) }));
  const status = isObject(record.status) ? { code: intOf(record.status.code), message: nonEmptyStr(record.status.message) } : null;
  return {
    ...base,
    name: nonEmptyStr(record.name),
    at: plausible(nanosToMs(record.endTimeUnixNano), receivedAt),
    startAt: plausible(nanosToMs(record.startTimeUnixNano), receivedAt),
    events,
    status,
  };
}

/**
 * Flattened OTLP items → normalized lines. Each record yields at least one line (an ignored one
 * when it means nothing), so the response can count it; its key is derived from the record as
 * received, so a re-sent export never duplicates.
 */
export function normalizeOtlp(items: unknown[], ctx: BatchContext): BatchResult {
  const receivedAt = ctx.receivedAt;
  const rejected: RejectedItem[] = [];
  const byAgent = new Map<OtlpAgent, OtlpRecord[]>();
  const outputs: OtlpOutput[] = [];
  items.forEach((item, index) => {
    const record = view(item, index, receivedAt);
    if (typeof record === "string") return rejected.push({ index, error: record });
    const agent = (record.service ? AGENTS.find((a) => a.matches(record.service!)) : undefined) ?? (isGenAiSpan(record) ? genAiOtlp : undefined);
    if (!agent) return outputs.push({ index, events: [], nativeType: record.name });
    byAgent.set(agent, [...(byAgent.get(agent) ?? []), record]);
  });
  for (const [agent, records] of byAgent) outputs.push(...agent.read(records, receivedAt));
  outputs.sort((a, b) => a.index - b.index);

  const lines: NormalizedLine[] = [];
  for (const out of outputs) {
    if ("error" in out) {
      rejected.push({ index: out.index, error: out.error });
      continue;
    }
    const raw = items[out.index];
    const events: (NormalizedEvent | null)[] = out.events.length ? out.events : [null];
    events.forEach((event, part) => {
      const idempotencyKey = deriveKey(keyMaterial({ format: OTLP_FORMAT, threadId: event?.threadId ?? null, line: { raw, part }, at: null }), OTLP_FORMAT, recordTime(raw));
      if (event) event.at = Math.round(event.at);
      lines.push({ index: out.index, event, nativeType: out.nativeType, format: OTLP_FORMAT, idempotencyKey, raw, receivedAt });
    });
  }
  return { lines, rejected, context: { threadId: null, turnId: null } };
}
