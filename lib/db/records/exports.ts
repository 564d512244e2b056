import type { AuditFilter } from "./audit";
import type { ExportQuery } from "@/lib/insights/range";
import { exportStream, type ExportFormat, type ExportKind, type ExportRow } from "@/lib/insights/stream";

/**
 * Export rows as both stores read them (times in epoch ms), the keyset paging they share, and
 * the response bodies made of them. Column names are a documented contract (README "Exports"):
 * add columns at the end, never rename.
 */

export const EXPORT_COLUMNS = {
  threads: [
    "threadId", "sourceId", "source", "title", "agent", "provider", "model", "parentThreadId", "status", "turnId",
    "retryKind", "retryAttempt", "retryMaxAttempts", "nextAttemptAt", "nextAttemptEstimated", "deadlineAt", "resetAt",
    "advisedDelayMs", "policy", "lastErrorKind", "lastErrorHttpStatus", "lastErrorCode", "lastErrorMessage",
    "createdAt", "updatedAt", "lastEventAt",
  ],
  episodes: [
    "threadId", "sourceId", "agent", "provider", "model", "episodeSeq", "turnId", "kind", "policy", "maxAttempts",
    "attempts", "startedAt", "endedAt", "outcome", "outcomeCode", "outcomeReason", "resetAt", "timeLostMs",
    "attemptsMade", "reportedRetryMs",
  ],
  attempts: [
    "threadId", "sourceId", "agent", "provider", "model", "episodeSeq", "kind", "policy", "n", "noticeAt",
    "advisedDelayMs", "expectedAt", "estimated", "deadlineAt", "startedAt", "retriedAt", "actualGapMs", "earlyByMs",
    "waitMs", "httpStatus", "code", "message",
  ],
} as const satisfies Record<ExportKind, readonly string[]>;

export const TIMELINE_COLUMNS = [
  "record", "at", "endAt", "episodeSeq", "eventSeq", "type", "nativeType", "format", "kind", "policy", "n",
  "maxAttempts", "delayMs", "advisedDelayMs", "expectedAt", "estimated", "actualGapMs", "earlyByMs", "outcome",
  "outcomeCode", "httpStatus", "code", "message", "count", "late", "receivedAt", "raw",
] as const;


export const AUDIT_COLUMNS = ["at", "actor", "action", "target", "reason", "result", "detail"] as const;


const TIME_COLUMNS = new Set([
  "nextAttemptAt", "deadlineAt", "resetAt", "createdAt", "updatedAt", "lastEventAt", "startedAt", "endedAt",
  "noticeAt", "expectedAt", "retriedAt", "at", "endAt", "receivedAt",
]);
const BOOLEAN_COLUMNS = new Set(["nextAttemptEstimated", "estimated", "late"]);

/** Stored integers → ISO times and booleans; `raw` payloads back to JSON; internal keys dropped. */
export function present(row: Record<string, unknown>): ExportRow {
  const out: ExportRow = {};
  for (const [column, value] of Object.entries(row)) {
    if (column.startsWith("_")) continue;
    if (value === null || value === undefined) out[column] = null;
    else if (TIME_COLUMNS.has(column)) out[column] = new Date(value as number).toISOString();
    else if (BOOLEAN_COLUMNS.has(column)) out[column] = value === 1 || value === true;
    else if (column === "raw") out[column] = JSON.parse(value as string) as unknown;
    else out[column] = value;
  }
  return out;
}

/** Rows per export page. */
export const PAGE_SIZE = 500;

/** One export's statement: its parameters before and after the keyset pair (_sort, _key). */
export interface PagedQuery {
  text: string;
  before: unknown[];
  after: unknown[];
}

/**
 * Keyset pages: `read(cursor)` answers the rows after `cursor` in key order (at most `pageSize`),
 * `cursorOf` names a row's place; each page is one short query, nothing stays open between pages.
 */
export async function* keysetPages<C>(
  first: C,
  read: (cursor: C) => Promise<Record<string, unknown>[]>,
  cursorOf: (row: Record<string, unknown>) => C,
  pageSize: number,
): AsyncGenerator<ExportRow[]> {
  let cursor = first;
  for (;;) {
    const rows = await read(cursor);
    if (rows.length === 0) return;
    cursor = cursorOf(rows[rows.length - 1]);
    yield rows.map(present);
    if (rows.length < pageSize) return;
  }
}

/** Where a store's export pages come from (lib/db/exports.ts on SQLite, lib/db/postgres/exports.ts). */
export interface ExportPages {
  exportPages(kind: ExportKind, query: ExportQuery, now: number): AsyncGenerator<ExportRow[]>;
  auditExportPages(filter: AuditFilter): AsyncGenerator<ExportRow[]>;
  timelinePages(key: number): AsyncGenerator<ExportRow[]>;
}

/** The export response bodies, by name, over one store's pages. */
export function exportBodies(pages: ExportPages) {
  return {
    facts: ({ format, kind, query, now }: { format: ExportFormat; kind: ExportKind; query: ExportQuery; now: number }) =>
      exportStream(format, EXPORT_COLUMNS[kind], pages.exportPages(kind, query, now)),
    audit: ({ format, filter }: { format: ExportFormat; filter: AuditFilter }) => exportStream(format, AUDIT_COLUMNS, pages.auditExportPages(filter)),
    /** One thread's timeline, after its row (JSON: `{thread, timeline}`; NDJSON: a `thread` record first). */
    timeline: ({ format, key, thread }: { format: ExportFormat; key: number; thread: ExportRow }) =>
      exportStream(format, TIMELINE_COLUMNS, pages.timelinePages(key), {
        jsonOpen: `{"thread":${JSON.stringify(thread)},"timeline":[`,
        jsonClose: "]}",
        ndjsonFirst: { record: "thread", ...thread },
      }),
  };
}
