import { z } from "zod";
import { TIMELINE_COLUMNS, threadExportRow, timelinePages } from "@/lib/db/exports";
import { EXPORT_FORMATS, exportFilename, exportHeaders, exportStream } from "@/lib/insights/stream";
import { problem } from "@/lib/server/http";
import { resolveThread } from "@/lib/server/resolve-thread";

export const dynamic = "force-dynamic";

const formatSchema = z.enum(EXPORT_FORMATS, { error: `expected one of ${EXPORT_FORMATS.join(", ")}` }).default("json");

/**
 * One thread's timeline (episodes, attempts, events in time order) as ?format=json|ndjson|csv.
 * JSON: {thread, timeline: [...]}; NDJSON: a `{"record":"thread",…}` line, then the timeline;
 * CSV: the timeline. `?source=` picks the thread when several sources reported the same id.
 */
export async function GET(request: Request, { params }: { params: Promise<{ id: string }> }) {
  const now = Date.now();
  const { id } = await params;
  const search = new URL(request.url).searchParams;
  const format = formatSchema.safeParse(search.get("format") ?? undefined);
  if (!format.success) return problem(400, "Bad export query", `format: ${format.error.issues[0].message}`);
  const resolved = await resolveThread(id, search.get("source"));
  if (!resolved.ok) {
    return problem(resolved.status, resolved.status === 404 ? "Not found" : "Ambiguous thread id", resolved.error, { candidates: resolved.candidates });
  }
  const thread = await threadExportRow(resolved.key, now);
  if (!thread) return problem(404, "Not found", `No thread "${id}".`);
  const body = exportStream(format.data, TIMELINE_COLUMNS, timelinePages(resolved.key), {
    jsonOpen: `{"thread":${JSON.stringify(thread)},"timeline":[`,
    jsonClose: "]}",
    ndjsonFirst: { record: "thread", ...thread },
  });
  return new Response(body, { headers: exportHeaders(format.data, exportFilename(`thread-${id}`, format.data, now)) });
}
