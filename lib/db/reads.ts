import type { AuditFilter } from "./audit";
import { AUDIT_COLUMNS, auditExportPages, EXPORT_COLUMNS, exportPages, TIMELINE_COLUMNS, timelinePages } from "./exports";
import { readInsights } from "./insights";
import { readMetrics } from "./metrics";
import type { ExportQuery, InsightsQuery } from "@/lib/insights/range";
import { exportStream, type ExportFormat, type ExportKind, type ExportRow } from "@/lib/insights/stream";

/**
 * The reads that take more than a few milliseconds at scale (insights, the metrics snapshot), by name: what the read worker
 * (read-worker.ts) runs off the ingest thread. Their arguments and results cross between
 * threads, so they are plain data.
 *
 * - `READS` answer at once, each synchronously inside one read transaction (one snapshot for
 *   every chart of an insights view).
 * - `EXPORTS` are encoded response bodies, produced a keyset page at a time when the reader
 *   asks for more.
 */
export const READS = {
  insights: (query: InsightsQuery, now: number) => readInsights(query, now),
  metrics: (now: number) => readMetrics(now),
};
export type ReadName = keyof typeof READS;

export const EXPORTS = {
  facts: ({ format, kind, query, now }: { format: ExportFormat; kind: ExportKind; query: ExportQuery; now: number }) =>
    exportStream(format, EXPORT_COLUMNS[kind], exportPages(kind, query, now)),
  audit: ({ format, filter }: { format: ExportFormat; filter: AuditFilter }) => exportStream(format, AUDIT_COLUMNS, auditExportPages(filter)),
  /** One thread's timeline, after its row (JSON: `{thread, timeline}`; NDJSON: a `thread` record first). */
  timeline: ({ format, key, thread }: { format: ExportFormat; key: number; thread: ExportRow }) =>
    exportStream(format, TIMELINE_COLUMNS, timelinePages(key), {
      jsonOpen: `{"thread":${JSON.stringify(thread)},"timeline":[`,
      jsonClose: "]}",
      ndjsonFirst: { record: "thread", ...thread },
    }),
};
export type ExportName = keyof typeof EXPORTS;

/** What the server's thread asks the read worker: a read, or to open, pull from or cancel an export. */
export type ToWorker =
  | { id: number; read: ReadName; args: unknown[] }
  | { id: number; open: ExportName; args: unknown }
  | { id: number; pull: true }
  | { id: number; cancel: true };

/** The worker's answer: a read's value, an export's next chunk (null: the end), or an error's message. */
export type FromWorker = { id: number; value: unknown } | { id: number; chunk: Uint8Array | null } | { id: number; error: string };
