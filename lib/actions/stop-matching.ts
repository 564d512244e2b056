"use server";

import { z } from "zod";
import { stoppableThreadKeys } from "@/lib/db/threads";
import { stopThreads, summarizeStops } from "@/lib/server/stop";
import { parseThreadQuery } from "@/lib/threads/filter";
import { action, fail } from "./safe-action";

/** "Stop all N matching": stops exactly the threads of the current filter that are still active. */
export const stopMatching = action(
  {
    name: "stop-all",
    input: z.object({
      /** The board's URL query string: the same filter the operator sees. */
      query: z.string().max(4000),
      /** The count the operator confirmed; if the set changed since, nothing is stopped. */
      expected: z.number().int().min(0),
      reason: z.string().trim().max(500).optional(),
    }),
    resolve: ({ query }) => {
      const parsed = parseThreadQuery(new URLSearchParams(query));
      return parsed.ok ? parsed.query : fail(parsed.error);
    },
  },
  async ({ query, expected, reason }, { principal, resolved, now }) => {
    const { page: _page, pageSize: _pageSize, ...filter } = resolved;
    const keys = await stoppableThreadKeys(filter, now);
    if (keys.length !== expected) {
      return { ok: false, error: `The filter now matches ${keys.length} stoppable threads, not ${expected}; review and confirm again.`, count: keys.length };
    }
    const results = await stopThreads(keys, principal, reason || `Stop all matching (${query || "no filter"})`, now);
    // Threads whose source cannot carry out a stop get no directive (lib/threads/control.ts): skipped.
    return { ok: true, ...summarizeStops(results) };
  },
);
