import { z } from "zod";
import { withIngestSource } from "@/lib/server/auth";
import { waitForDirectives } from "@/lib/server/directives";
import { problem } from "@/lib/server/http";

export const dynamic = "force-dynamic";

const query = z.object({ wait: z.coerce.number().min(0).max(30).default(0) });

/** Long-poll (≤ 30 s) for the calling source's pending directives; they are marked delivered. */
export const GET = withIngestSource(async (request, source) => {
  const parsed = query.safeParse(Object.fromEntries(new URL(request.url).searchParams));
  if (!parsed.success) return problem(400, "Bad query", "wait: seconds to wait, a number from 0 to 30.");
  const directives = await waitForDirectives(source.id, parsed.data.wait * 1000, request.signal);
  return Response.json({ directives, serverTime: new Date().toISOString() });
});
