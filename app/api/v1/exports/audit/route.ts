import { auditFilter, auditQuery } from "@/lib/audit/query";
import { exportFilename, exportHeaders } from "@/lib/insights/stream";
import { exportResponse } from "@/lib/server/off-thread";
import { route } from "@/lib/server/route";
import { exportFormatQuery } from "@/lib/validation";

export const dynamic = "force-dynamic";

/**
 * Streamed export of the audit log, oldest first: ?format=json|ndjson|csv and the audit page's
 * filter (action, actor, q, range or from/to). Columns: README "Exports".
 */
export const GET = route(
  { access: "viewer", query: { schema: auditQuery.extend(exportFormatQuery.shape), title: "Bad export query" } },
  ({ query: { format, ...filter }, now }) =>
    exportResponse("audit", { format, filter: auditFilter(filter, now) }, exportHeaders(format, exportFilename("audit", format, now))),
);
