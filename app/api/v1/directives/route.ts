import { z } from "zod";
import { recordPoll } from "@/lib/db/sources";
import { parseCapabilities } from "@/lib/threads/control";
import { waitForDirectives } from "@/lib/server/directives";
import { jsonAnswer } from "@/lib/server/http";
import { route } from "@/lib/server/route";
import type { DirectivesResponse } from "@/lib/wire/types";

export const dynamic = "force-dynamic";

/** Long-poll (≤ 30 s) for the calling source's pending directives; they are marked delivered. */
export const GET = route(
  {
    access: "ingest",
    query: {
      schema: z.object({ wait: z.coerce.number().min(0).max(30).default(0), can: z.string().max(200).optional() }),
      title: "Bad query",
      detail: "wait: seconds to wait, a number from 0 to 30; can: what this relay carries out, e.g. interrupt,continue.",
    },
  },
  async ({ source, query, request }) => {
    // `can` is the relay's announcement (lib/threads/control.ts); stored as the words it knows.
    await recordPoll(source.id, query.can === undefined ? undefined : parseCapabilities(query.can).join(","), Date.now());
    const directives = await waitForDirectives(source.id, query.wait * 1000, request.signal);
    return jsonAnswer(request, { directives, serverTime: new Date().toISOString() } satisfies DirectivesResponse);
  },
);
