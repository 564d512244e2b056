import { z } from "zod";
import { eventRaw } from "@/lib/db/events";
import { problem } from "@/lib/server/http";
import { route } from "@/lib/server/route";
import type { EventRaw } from "@/lib/wire/types";
import { positiveId, positiveSeq } from "@/lib/validation";

export const dynamic = "force-dynamic";

/** One event's payload exactly as the source sent it (the thread page's "show raw"). */
export const GET = route(
  { access: "viewer", params: { schema: z.object({ key: positiveId("key"), seq: positiveSeq("seq") }), status: 400, title: "Bad key" } },
  async ({ params }) => {
    const raw = await eventRaw(params.key, params.seq);
    if (raw === undefined) return problem(404, "Not found", `Thread ${params.key} has no event ${params.seq}.`);
    return Response.json({ seq: params.seq, raw } satisfies EventRaw);
  },
);
