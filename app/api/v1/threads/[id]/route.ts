import { threadDetail } from "@/lib/db/threads";
import { problem } from "@/lib/server/http";
import { route } from "@/lib/server/route";
import type { ThreadDetailResponse } from "@/lib/wire/types";

export const dynamic = "force-dynamic";

/**
 * One thread: projection, episodes with attempts, lineage, directives and its newest events;
 * earlier events and raw payloads come from /api/v1/threads/by-key/{key}/events.
 */
export const GET = route({ access: "viewer", thread: true }, async ({ params, thread, now }) => {
  const detail = await threadDetail(thread, now);
  if (!detail) return problem(404, "Not found", `No thread "${params.id}".`);
  return Response.json({ ...detail, serverTime: new Date(now).toISOString() } satisfies ThreadDetailResponse);
});
