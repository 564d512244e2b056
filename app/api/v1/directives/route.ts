import { z } from "zod";
import { recordPoll } from "@/lib/db/sources";
import { parseCapabilities } from "@/lib/threads/control";
import { bearer } from "@/lib/auth/credentials";
import { admitLongPoll, LONG_POLL_RETRY_AFTER_S, LONG_POLLS_PER_TOKEN, waitForDirectives } from "@/lib/server/directives";
import { problem, withRetryAfter } from "@/lib/server/http";
import { hashToken } from "@/lib/server/tokens";
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
    // Only a poll that waits holds anything open; the route has checked the token.
    const release = query.wait > 0 ? admitLongPoll(hashToken(bearer(request)!)) : () => undefined;
    if (!release) {
      return withRetryAfter(
        problem(429, "Too Many Requests", `This ingest token already holds ${LONG_POLLS_PER_TOKEN} directive long-polls open (the most one token may); retry after ${LONG_POLL_RETRY_AFTER_S} s.`),
        LONG_POLL_RETRY_AFTER_S,
      );
    }
    try {
      // `can` is the relay's announcement (lib/threads/control.ts); stored as the words it knows.
      await recordPoll(source.id, query.can === undefined ? undefined : parseCapabilities(query.can).join(","), Date.now());
      const directives = await waitForDirectives(source.id, query.wait * 1000, request.signal);
      return Response.json({ directives, serverTime: new Date().toISOString() } satisfies DirectivesResponse);
    } finally {
      release();
    }
  },
);
