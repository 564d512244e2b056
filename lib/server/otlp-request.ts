import type { SourceRecord } from "@/lib/db/sources";
import { normalizeBatch, withoutIgnored } from "@/lib/ingest";
import { MAX_INGEST_BODY_BYTES, MAX_ITEMS } from "@/lib/ingest/limits";
import { otlpItems, type OtlpSignal } from "@/lib/ingest/otlp";
import { describeOverBound, measureJson, measureOtlpProtobuf, type OtlpOverBound } from "@/lib/ingest/otlp-measure";
import { decodeOtlpProtobuf, encodeOtlpResponse, OTLP_PROTOBUF } from "@/lib/ingest/otlp-protobuf";
import type { OtlpExportResponse } from "@/lib/wire/types";
import { problem } from "./http";
import { ingestLines } from "./pipeline";
import { admitIngest } from "./quota";

/** How many rejected records' reasons one response names. */
const REASONS_SHOWN = 5;

const REJECTED_FIELD = { logs: "rejectedLogRecords", traces: "rejectedSpans", metrics: "rejectedDataPoints" } as const;

/**
 * One OTLP/HTTP export (JSON or protobuf encoding), its body already read and decompressed
 * (`body.text` is read only for JSON, so a protobuf body is never decoded as text):
 * records → normalize → reduce/persist, answered in the OTLP response shape, in the request's
 * encoding. The body is measured against the bounds of limits.ts before it is decoded
 * (otlp-measure.ts), so a small compressed body cannot cost more than the largest export taken.
 * Refusals are problem+json with the status codes exporters act on: 429/503 with Retry-After are
 * retried later, 4xx dropped.
 */
export async function handleOtlp(signal: OtlpSignal, request: Request, body: { text: string; bytes: Uint8Array }, source: SourceRecord, receivedAt: number): Promise<Response> {
  const protobuf = (request.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase() === OTLP_PROTOBUF;
  const encoding = protobuf ? "protobuf" : "JSON";
  // Bytes that are not an export (OtlpMalformedError) are refused as protobufjs's errors are.
  const over = decode(() => (protobuf ? measureOtlpProtobuf(signal, body.bytes) : measureJson(body.text)), encoding);
  if (over instanceof Response) return over;
  if (over) return overBound(over as OtlpOverBound);
  const parsed = decode(() => (protobuf ? decodeOtlpProtobuf(signal, body.bytes) : JSON.parse(body.text)), encoding);
  if (parsed instanceof Response) return parsed;
  const answer = (response: OtlpExportResponse) =>
    protobuf ? new Response(Buffer.from(encodeOtlpResponse(signal, response)), { headers: { "content-type": OTLP_PROTOBUF } }) : Response.json(response);
  return ingestExport(signal, parsed, source, receivedAt, answer);
}

/** 413, naming the bound passed (its constant and limit) and what was counted. */
function overBound(over: OtlpOverBound): Response {
  return problem(413, "Payload Too Large", `${describeOverBound(over)}; lower the exporter's batch size.`, { bound: over.bound, limit: over.limit, counted: over.counted });
}

function decode(read: () => unknown, encoding: string): unknown {
  try {
    return read();
  } catch (error) {
    return problem(400, "Unparseable body", `Expected an OTLP/HTTP ${encoding} export request: ${(error as Error).message}`);
  }
}

async function ingestExport(signal: OtlpSignal, body: unknown, source: SourceRecord, receivedAt: number, answer: (response: OtlpExportResponse) => Response): Promise<Response> {
  const { items, dataPoints } = otlpItems(signal, body);
  if (items.length > MAX_ITEMS || dataPoints > MAX_ITEMS) return problem(413, "Too many items", `more than ${MAX_ITEMS} records in one export; lower the exporter's batch size`);
  // Metrics are accepted but store nothing, so they count as one request, not as stored events.
  const refused = await admitIngest(source, signal === "metrics" ? 0 : items.length, receivedAt);
  // A full storage quota is 507 on the ingestion API; an exporter drops data on it, but waits and retries on 503.
  if (refused) return refused.status === 507 ? new Response(refused.body, { status: 503, headers: refused.headers }) : refused;
  // Metrics store nothing; the export is still recorded as heard from.
  if (signal === "metrics") {
    await ingestLines(source, [], receivedAt, { otlp: true });
    return answer({});
  }
  const batch = normalizeBatch("otlp", items, { receivedAt });
  const { lines } = withoutIgnored(batch.lines);
  await ingestLines(source, lines, receivedAt, { otlp: true });
  if (batch.rejected.length === 0) return answer({});
  const reasons = batch.rejected.slice(0, REASONS_SHOWN).map((r) => `record ${r.index}: ${r.error}`);
  const more = batch.rejected.length > REASONS_SHOWN ? `; and ${batch.rejected.length - REASONS_SHOWN} more` : "";
  const response: OtlpExportResponse = { partialSuccess: { [REJECTED_FIELD[signal]]: batch.rejected.length, errorMessage: reasons.join("; ") + more } };
  return answer(response);
}

/** How OTLP routes read their body: within the ingest limit, gzip decompressed within the same limit. */
export const OTLP_BODY = { maxBytes: MAX_INGEST_BODY_BYTES, hint: "lower the exporter's batch size", gzip: true };
