import { auditExportPages, exportPages, timelinePages } from "./exports";
import { readInsights } from "./insights";
import { readMetrics } from "./metrics";
import { readBoard, readFilterOptions } from "./threads";
import { readIncidents } from "./incidents";
import { readLimitWindows } from "./limits";
import type { InsightsQuery } from "@/lib/insights/range";
import type { IncidentStateFilter } from "@/lib/wire/types";
import type { ThreadFilter } from "./thread-filter";
import type { PageOptions } from "./records/threads";
import { exportBodies } from "./records/exports";

/**
 * The reads that take more than a few milliseconds at scale (insights, the metrics snapshot, and
 * what the board, insights and Limits pages render first: the board, its filter menus, the
 * incidents, the usage windows), by name: what the read worker (read-worker.ts) runs off the
 * ingest thread. Their arguments and results cross between
 * threads, so they are plain data.
 *
 * - `READS` answer at once, each synchronously inside one read transaction (one snapshot for
 *   every chart of an insights view).
 * - `EXPORTS` are encoded response bodies, produced a keyset page at a time when the reader
 *   asks for more (gzipped there too when the client takes gzip).
 */
export const READS = {
  insights: (query: InsightsQuery, now: number) => readInsights(query, now),
  metrics: (now: number) => readMetrics(now),
  board: (filter: ThreadFilter, options: PageOptions, now: number) => readBoard(filter, options, now),
  filterOptions: () => readFilterOptions(),
  incidents: (state: IncidentStateFilter, now: number) => readIncidents(state, now),
  limits: (now: number) => readLimitWindows(now),
};
export type ReadName = keyof typeof READS;

export const EXPORTS = exportBodies({ exportPages, auditExportPages, timelinePages });
export type ExportName = keyof typeof EXPORTS;

/** What the server's thread asks the read worker: a read, or to open, pull from or cancel an export. */
export type ToWorker =
  | { id: number; read: ReadName; args: unknown[] }
  | { id: number; open: ExportName; args: unknown; gzip: boolean }
  | { id: number; pull: true }
  | { id: number; cancel: true };

/** The worker's answer: a read's value, an export's next chunk (null: the end), or an error's message. */
export type FromWorker = { id: number; value: unknown } | { id: number; chunk: Uint8Array | null } | { id: number; error: string };
