import { incidentDetail } from "@/lib/db/incidents";
import { problem } from "@/lib/server/http";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** One incident: its threads with their outcomes, notices per minute by thread, early retries, time lost. */
export const GET = route({ access: "viewer" }, async ({ params, now }) => {
  const detail = await incidentDetail(params.id, now);
  if (!detail) return problem(404, "Not found", `No incident "${params.id}".`);
  return Response.json(detail);
});
