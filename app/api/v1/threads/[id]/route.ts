import { threadDetail } from "@/lib/db/threads";
import { problem } from "@/lib/server/http";
import { resolveThread } from "@/lib/server/resolve-thread";

export const dynamic = "force-dynamic";

/** One thread: projection, episodes with attempts, lineage, directives and every event with its raw payload. */
export async function GET(request: Request, { params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const resolved = await resolveThread(id, new URL(request.url).searchParams.get("source"));
  if (!resolved.ok) return problem(resolved.status, resolved.status === 404 ? "Not found" : "Ambiguous thread id", resolved.error, { candidates: resolved.candidates });
  const now = Date.now();
  const detail = await threadDetail(resolved.key, now);
  if (!detail) return problem(404, "Not found", `No thread "${id}".`);
  return Response.json({ ...detail, serverTime: new Date(now).toISOString() });
}
