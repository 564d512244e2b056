import { parseInsightsQuery } from "@/lib/insights/range";
import { problem } from "@/lib/server/http";
import { read } from "@/lib/server/off-thread";
import { route } from "@/lib/server/route";
import type { InsightsResponse } from "@/lib/wire/types";

export const dynamic = "force-dynamic";

/**
 * Every insights chart's numbers: ?range=1h|24h|7d or ?from=&to= (ISO or epoch ms), ?split=kind|provider|model,
 * plus the board filter (status, kind, provider, model, source, q). Fields: lib/insights/types.ts.
 */
export const GET = route({ access: "viewer" }, async ({ search, now }) => {
  const parsed = parseInsightsQuery(search, now);
  if (!parsed.ok) return problem(400, "Bad insights query", parsed.error);
  return Response.json({ ...(await read("insights", parsed.query, now)), serverTime: new Date(now).toISOString() } satisfies InsightsResponse);
});
