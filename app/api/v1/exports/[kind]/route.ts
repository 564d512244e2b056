import { z } from "zod";
import { parseExportQuery } from "@/lib/insights/range";
import { EXPORT_KINDS, exportFilename, exportHeaders } from "@/lib/insights/stream";
import { problem } from "@/lib/server/http";
import { exportResponse } from "@/lib/server/off-thread";
import { route } from "@/lib/server/route";
import { exportFormatQuery } from "@/lib/validation";

export const dynamic = "force-dynamic";

/**
 * Streamed export of threads, episodes or attempts: ?format=json|ndjson|csv, the board filter
 * and ?range= or ?from=&to= (none: everything). Columns: README "Exports".
 */
export const GET = route(
  {
    access: "viewer",
    params: { schema: z.object({ kind: z.enum(EXPORT_KINDS, { error: `expected one of ${EXPORT_KINDS.join(", ")}` }) }), status: 404, title: "Unknown export" },
    query: { schema: exportFormatQuery, title: "Bad export query" },
  },
  ({ params: { kind }, query: { format }, search, now }) => {
    const parsed = parseExportQuery(search, now);
    if (!parsed.ok) return problem(400, "Bad export query", parsed.error);
    return exportResponse("facts", { format, kind, query: parsed.query, now }, exportHeaders(format, exportFilename(kind, format, now)));
  },
);
