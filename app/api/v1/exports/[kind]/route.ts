import { z } from "zod";
import { EXPORT_COLUMNS, exportPages } from "@/lib/db/exports";
import { parseExportQuery } from "@/lib/insights/range";
import { EXPORT_FORMATS, EXPORT_KINDS, exportFilename, exportHeaders, exportStream } from "@/lib/insights/stream";
import { problem } from "@/lib/server/http";

export const dynamic = "force-dynamic";

const kindSchema = z.enum(EXPORT_KINDS, { error: `expected one of ${EXPORT_KINDS.join(", ")}` });
const formatSchema = z.enum(EXPORT_FORMATS, { error: `expected one of ${EXPORT_FORMATS.join(", ")}` }).default("json");

/**
 * Streamed export of threads, episodes or attempts: ?format=json|ndjson|csv, the board filter
 * and ?range= or ?from=&to= (none: everything). Columns: README "Exports".
 */
export async function GET(request: Request, { params }: { params: Promise<{ kind: string }> }) {
  const now = Date.now();
  const search = new URL(request.url).searchParams;
  const kind = kindSchema.safeParse((await params).kind);
  if (!kind.success) return problem(404, "Unknown export", kind.error.issues[0].message);
  const format = formatSchema.safeParse(search.get("format") ?? undefined);
  if (!format.success) return problem(400, "Bad export query", `format: ${format.error.issues[0].message}`);
  const parsed = parseExportQuery(search, now);
  if (!parsed.ok) return problem(400, "Bad export query", parsed.error);
  const body = exportStream(format.data, EXPORT_COLUMNS[kind.data], exportPages(kind.data, parsed.query, now));
  return new Response(body, { headers: exportHeaders(format.data, exportFilename(kind.data, format.data, now)) });
}
