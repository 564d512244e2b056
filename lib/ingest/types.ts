/**
 * The normalize stage's contract (ingest → **normalize** → reduce → persist → publish → render).
 * Adapters here are pure: no I/O, no clock — the receive time is passed in.
 */
import type { RadarEvent } from "../retry/types";
import type { LimitSnapshot } from "./limit-snapshots";

/**
 * Agents' own output formats, each with its endpoint /api/v1/ingest/{format} and a relay mode.
 * `codex` = Codex app-server JSON-RPC. The one list: the route, the relay and the adapters
 * derive from it.
 */
export const NATIVE_FORMATS = ["codex", "codex-exec", "claude"] as const;
export type NativeFormat = (typeof NATIVE_FORMATS)[number];

export function isNativeFormat(value: unknown): value is NativeFormat {
  return (NATIVE_FORMATS as readonly unknown[]).includes(value);
}

/** Wire formats accepted by the ingestion endpoints: the canonical event API plus the native ones. */
export const INGEST_FORMATS = ["canonical", ...NATIVE_FORMATS] as const;
export type IngestFormat = (typeof INGEST_FORMATS)[number];

/** OpenTelemetry records (POST /v1/logs, /v1/traces) of the agents otlp.ts knows. */
export const OTLP_FORMAT = "otlp";

/** The format of events the server writes itself (a stop, a settings change): no source reported them. */
export const SERVER_FORMAT = "radar";

/** What a stored line was received as. */
export type LineFormat = IngestFormat | typeof OTLP_FORMAT;

/** A RadarEvent before the server assigns its storage `seq`. */
export type NormalizedEvent = Omit<RadarEvent, "seq">;

export interface NormalizedLine {
  /** Position of the item in the request (0-based; for NDJSON the ordinal of the non-blank line). */
  index: number;
  /**
   * The event for the reducer. `null` only for lines deliberately skipped (Codex JSON-RPC
   * responses; thread-less Codex notifications when no thread is known in the batch). A skipped
   * line is still returned with its raw payload and key so the server can store it raw.
   */
  event: NormalizedEvent | null;
  /** Native message kind (Codex method, exec `type`, Claude `type`/`subtype`); null for canonical. */
  nativeType: string | null;
  format: LineFormat;
  /** Canonical `id` when given, else a derived stable key (see key.ts). */
  idempotencyKey: string;
  /** The item exactly as received (a wrapped line keeps its `{at, message}` wrapper). */
  raw: unknown;
  /** `raw` as stored (JSON), once bounded and masked (batch.ts); absent, storage encodes `raw`. */
  rawJson?: string;
  receivedAt: number;
  /** Usage windows the line reports (limit-snapshots.ts); they never change a thread's retry state. */
  limits?: LimitSnapshot[];
}

export interface RejectedItem {
  index: number;
  /** Names the field path, e.g. `error.httpStatus: expected an integer between 100 and 599`. */
  error: string;
}

export interface BatchContext {
  /** Receive time of the request (epoch ms). Default event time. */
  receivedAt: number;
  /** Thread the lines belong to when they do not say (`?threadId=` for codex-exec). */
  threadId?: string | null;
  /** Current turn of that thread, e.g. the `context.turnId` a previous batch returned. */
  turnId?: string | null;
}

export interface BatchResult {
  lines: NormalizedLine[];
  rejected: RejectedItem[];
  /**
   * Thread / turn current at the end of the batch. A server that receives a stream one line per
   * request (codex exec, Claude) can keep this per source and pass it back as the next ctx.
   */
  context: { threadId: string | null; turnId: string | null };
}
