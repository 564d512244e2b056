import type { RadarEvent } from "@/lib/retry";

/** A stored line as either store's event statements take it (lib/db/events.ts, lib/db/postgres/events.ts). */
export interface EventRow {
  sourceId: string;
  threadId: number | null;
  idempotencyKey: string;
  format: string;
  nativeType: string | null;
  event: Omit<RadarEvent, "seq">;
  kind: string | null;
  receivedAt: number;
  raw: unknown;
  /** `raw` already encoded (lib/ingest/batch.ts), stored as it is. */
  rawJson?: string;
  /** The time the source sent when it lay too far ahead of the receive time (the event is stored at the receive time). */
  clampedFrom?: number;
}

/** An error code as stored: a source may report a string or a structured code. */
export function codeText(code: unknown): string | null {
  if (code == null) return null;
  return typeof code === "string" ? code : JSON.stringify(code);
}

/** The columns of an event row after its key, in the order both stores' INSERT lists them. */
export function eventColumns(row: EventRow) {
  const { event } = row;
  return {
    type: event.type,
    at: event.at,
    receivedAt: row.receivedAt,
    lastAt: event.lastAt ?? null,
    count: event.progressCount ?? 1,
    turnId: event.turnId ?? null,
    attempt: event.attempt ?? null,
    maxAttempts: event.maxAttempts ?? null,
    delayMs: event.delayMs == null ? null : Math.round(event.delayMs),
    kind: row.kind,
    httpStatus: event.error?.httpStatus ?? null,
    code: codeText(event.error?.code),
    message: event.error?.message ?? event.reason ?? null,
    raw: row.rawJson ?? JSON.stringify(row.raw ?? null),
    normalized: JSON.stringify(row.clampedFrom == null ? event : { ...event, clampedFrom: row.clampedFrom }),
  };
}

/** A progress row grown by a fold: its count and last time, as both stores rewrite its normalized event. */
export function foldedProgress(normalizedJson: string, count: number, at: number): string {
  const normalized = JSON.parse(normalizedJson) as Omit<RadarEvent, "seq">;
  normalized.progressCount = (normalized.progressCount ?? 1) + count;
  normalized.lastAt = Math.max(normalized.lastAt ?? normalized.at, at);
  return JSON.stringify(normalized);
}

/** A stored event in reducer order's form: its normalized line with its sequence. */
export const toRadarEvent = (row: { id: number; normalized: string }): RadarEvent => ({
  ...(JSON.parse(row.normalized) as Omit<RadarEvent, "seq">),
  seq: row.id,
});
