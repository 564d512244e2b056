import { csvLine } from "./csv";

/**
 * Streamed export encoding. Rows arrive in batches from an iterator (lib/db/exports.ts reads
 * one keyset page per batch), and each batch is encoded and handed to the response only when
 * the client asks for more: memory stays at one batch whatever the export's size.
 */
export const EXPORT_FORMATS = ["json", "ndjson", "csv"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export const EXPORT_KINDS = ["threads", "episodes", "attempts"] as const;
export type ExportKind = (typeof EXPORT_KINDS)[number];

const CONTENT_TYPES: Record<ExportFormat, string> = {
  json: "application/json; charset=utf-8",
  ndjson: "application/x-ndjson; charset=utf-8",
  csv: "text/csv; charset=utf-8",
};

export type ExportRow = Record<string, unknown>;

export interface StreamOptions {
  /** JSON: text before and after the rows (default a bare array). */
  jsonOpen?: string;
  jsonClose?: string;
  /** NDJSON: a first line before the rows (e.g. the thread a timeline belongs to). */
  ndjsonFirst?: ExportRow;
}

/** Every row carries every column, in column order, so JSON keys are as stable as CSV headers. */
function ordered(row: ExportRow, columns: readonly string[]): ExportRow {
  const out: ExportRow = {};
  for (const column of columns) out[column] = row[column] ?? null;
  return out;
}

function encodeBatch(format: ExportFormat, columns: readonly string[], rows: readonly ExportRow[], first: boolean): string {
  if (format === "csv") return rows.map((row) => csvLine(columns.map((c) => row[c]))).join("");
  if (format === "ndjson") return rows.map((row) => `${JSON.stringify(ordered(row, columns))}\n`).join("");
  return rows.map((row, i) => `${first && i === 0 ? "\n" : ",\n"}${JSON.stringify(ordered(row, columns))}`).join("");
}

export function exportStream(
  format: ExportFormat,
  columns: readonly string[],
  batches: Iterator<readonly ExportRow[]> | AsyncIterator<readonly ExportRow[]>,
  options: StreamOptions = {},
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let wroteRow = false;
  let started = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let text = "";
      if (!started) {
        started = true;
        if (format === "csv") text += csvLine(columns);
        if (format === "json") text += options.jsonOpen ?? "[";
        if (format === "ndjson" && options.ndjsonFirst) text += `${JSON.stringify(options.ndjsonFirst)}\n`;
      }
      // A pull that enqueues nothing is never followed by another: skip empty batches here.
      for (;;) {
        const next = await batches.next();
        if (next.done) {
          if (format === "json") text += `${wroteRow ? "\n" : ""}${options.jsonClose ?? "]"}\n`;
          if (text) controller.enqueue(encoder.encode(text));
          controller.close();
          return;
        }
        text += encodeBatch(format, columns, next.value, !wroteRow);
        if (next.value.length) wroteRow = true;
        if (text) {
          controller.enqueue(encoder.encode(text));
          return;
        }
      }
    },
    async cancel() {
      await batches.return?.();
    },
  });
}

/** "radar-attempts-20261129T140500Z.csv" */
export function exportFilename(name: string, format: ExportFormat, now: number): string {
  const stamp = new Date(now).toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z");
  return `radar-${name.replace(/[^A-Za-z0-9._-]+/g, "_").slice(0, 80)}-${stamp}.${format}`;
}

export function exportHeaders(format: ExportFormat, filename: string): HeadersInit {
  return {
    "content-type": CONTENT_TYPES[format],
    "content-disposition": `attachment; filename="${filename}"`,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  };
}
