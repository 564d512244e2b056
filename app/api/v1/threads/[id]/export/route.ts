import { threadExportRow } from "@/lib/db/exports";
import { exportFilename, exportHeaders } from "@/lib/insights/stream";
import { problem } from "@/lib/server/http";
import { exportResponse } from "@/lib/server/off-thread";
import { route } from "@/lib/server/route";
import { exportFormatQuery } from "@/lib/validation";

export const dynamic = "force-dynamic";

/**
 * One thread's timeline (episodes, attempts, events in time order) as ?format=json|ndjson|csv.
 * JSON: {thread, timeline: [...]}; NDJSON: a `{"record":"thread",…}` line, then the timeline;
 * CSV: the timeline. `?source=` picks the thread when several sources reported the same id.
 */
export const GET = route(
  { access: "viewer", query: { schema: exportFormatQuery, title: "Bad export query" }, thread: true },
  async ({ params, query: { format }, thread: key, now }) => {
    const thread = await threadExportRow(key, now);
    if (!thread) return problem(404, "Not found", `No thread "${params.id}".`);
    return exportResponse("timeline", { format, key, thread }, exportHeaders(format, exportFilename(`thread-${params.id}`, format, now)));
  },
);
