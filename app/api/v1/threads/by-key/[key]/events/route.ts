import { z } from "zod";
import { threadEventPage } from "@/lib/db/events";
import { threadExists } from "@/lib/db/threads";
import { problem } from "@/lib/server/http";
import { route } from "@/lib/server/route";
import { EVENT_PAGE_SIZE, type EventPage } from "@/lib/wire/types";
import { positiveSeq } from "@/lib/validation";
import { threadKeyParams } from "../../key-param";

export const dynamic = "force-dynamic";

/** At most this many events per page, raw payloads included or not. */
const MAX_PAGE = 500;

/**
 * A thread's events a page at a time, newest first: `before=<seq>` for the page before that
 * event, `limit` (default 100), `raw=1` to include the raw payloads.
 */
export const GET = route(
  {
    access: "viewer",
    params: threadKeyParams,
    query: {
      schema: z.object({
        before: positiveSeq("before").optional(),
        limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(EVENT_PAGE_SIZE),
        raw: z.enum(["0", "1", "true", "false"]).optional(),
      }),
      title: "Bad query",
      detail: `Expected before=<seq> (a positive integer), limit=1…${MAX_PAGE} and raw=1 or 0.`,
    },
  },
  async ({ params, query }) => {
    if (!(await threadExists(params.key))) return problem(404, "Not found", `No thread with key ${params.key}.`);
    const page = await threadEventPage(params.key, { before: query.before, limit: query.limit, raw: query.raw === "1" || query.raw === "true" });
    return Response.json(page satisfies EventPage);
  },
);
