import { auditExportPages, exportPages, timelinePages } from "./exports";
import { readInsights } from "./insights";
import { readMetrics } from "./metrics";
import { readBoard, readFilterOptions } from "./threads";
import { readIncidents } from "./incidents";
import { readLimitWindows } from "./limits";
import type { InsightsQuery } from "@/lib/insights/range";
import { renderMetrics, type ExposedCounters, type InstanceState } from "@/lib/insights/metrics";
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
 *   every chart of an insights view). One that has work left once its rows are read (the metrics
 *   exposition renders its text) answers with that work, a function, run after the transaction
 *   (`finishRead`).
 * - `EXPORTS` are encoded response bodies, produced a keyset page at a time when the reader
 *   asks for more.
 */
export const READS = {
  insights: (query: InsightsQuery, now: number) => readInsights(query, now),
  metricsExposition: (now: number, instance: InstanceState, exposedBefore: ExposedCounters | null) => {
    const snapshot = readMetrics(now);
    return () => renderMetrics(snapshot, instance, exposedBefore);
  },
  board: (filter: ThreadFilter, options: PageOptions, now: number) => readBoard(filter, options, now),
  filterOptions: () => readFilterOptions(),
  incidents: (state: IncidentStateFilter, now: number) => readIncidents(state, now),
  limits: (now: number) => readLimitWindows(now),
};
export type ReadName = keyof typeof READS;

/** What a read answers: its value, or its value once the work it left (a function) is done. */
export type ReadAnswer<N extends ReadName> = ReturnType<(typeof READS)[N]> extends () => infer Later ? Awaited<Later> : ReturnType<(typeof READS)[N]>;

/** A read's answer from what it returned inside its read transaction: the work it left, run now (see READS). */
export async function finishRead(value: unknown): Promise<unknown> {
  return typeof value === "function" ? (value as () => unknown)() : value;
}

export const EXPORTS = exportBodies({ exportPages, auditExportPages, timelinePages });
export type ExportName = keyof typeof EXPORTS;

/** What the server's thread asks the read worker: a read, or to open, pull from or cancel an export. */
export type ToWorker =
  | { id: number; read: ReadName; args: unknown[] }
  | { id: number; open: ExportName; args: unknown }
  | { id: number; pull: true }
  | { id: number; cancel: true };

/** The worker's answer: a read's value, an export's next chunk (null: the end), or an error's message. */
export type FromWorker = { id: number; value: unknown } | { id: number; chunk: Uint8Array | null } | { id: number; error: string };
