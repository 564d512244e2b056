import { z } from "zod";
import { waitForDirectives } from "@/lib/server/directives";
import { route } from "@/lib/server/route";
import type { DirectivesResponse } from "@/lib/wire/types";

export const dynamic = "force-dynamic";

/** Long-poll (≤ 30 s) for the calling source's pending directives; they are marked delivered. */
export const GET = route(
  {
    access: "ingest",
    query: {
      schema: z.object({ wait: z.coerce.number().min(0).max(30).default(0) }),
      title: "Bad query",
      detail: "wait: seconds to wait, a number from 0 to 30.",
    },
  },
  async ({ source, query, request }) => {
    const directives = await waitForDirectives(source.id, query.wait * 1000, request.signal);
    return Response.json({ directives, serverTime: new Date().toISOString() } satisfies DirectivesResponse);
  },
);
