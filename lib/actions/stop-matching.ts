"use server";

import { z } from "zod";
import { describeZodError } from "@/lib/validation";
import { stoppableThreadKeys } from "@/lib/db/threads";
import { authorizeOperator } from "@/lib/server/auth";
import { stopThreads } from "@/lib/server/stop";
import { parseThreadQuery } from "@/lib/threads/filter";

const input = z.object({
  /** The board's URL query string: the same filter the operator sees. */
  query: z.string().max(4000),
  /** The count the operator confirmed; if the set changed since, nothing is stopped. */
  expected: z.number().int().min(0),
  reason: z.string().trim().max(500).optional(),
});

export type StopMatchingState =
  | { ok: true; stopping: number; notActive: number }
  | { ok: false; error: string; count?: number };

/** "Stop all N matching": stops exactly the threads of the current filter that are still active. */
export async function stopMatching(raw: z.input<typeof input>): Promise<StopMatchingState> {
  const parsed = input.safeParse(raw);
  if (!parsed.success) return { ok: false, error: describeZodError(parsed.error) };
  const query = parseThreadQuery(new URLSearchParams(parsed.data.query));
  if (!query.ok) return { ok: false, error: query.error };
  const operator = await authorizeOperator("stop-all");
  const { page: _page, pageSize: _pageSize, ...filter } = query.query;
  const keys = await stoppableThreadKeys(filter);
  if (keys.length !== parsed.data.expected) {
    return { ok: false, error: `The filter now matches ${keys.length} stoppable threads, not ${parsed.data.expected}; review and confirm again.`, count: keys.length };
  }
  const results = await stopThreads(keys, operator, parsed.data.reason || `Stop all matching (${parsed.data.query || "no filter"})`);
  return {
    ok: true,
    stopping: results.filter((r) => r.result === "stopping").length,
    notActive: results.filter((r) => r.result !== "stopping").length,
  };
}
