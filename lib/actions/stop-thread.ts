"use server";

import { z } from "zod";
import { describeZodError } from "@/lib/validation";
import { authorizeOperator } from "@/lib/server/auth";
import { stopThreads, type StopResult } from "@/lib/server/stop";

const input = z.object({
  key: z.number().int().positive(),
  reason: z.string().trim().max(500).optional(),
});

export type StopThreadState = { ok: true; result: StopResult } | { ok: false; error: string };

/** The board's and the thread page's Stop retrying button. */
export async function stopThread(raw: z.input<typeof input>): Promise<StopThreadState> {
  const parsed = input.safeParse(raw);
  if (!parsed.success) return { ok: false, error: describeZodError(parsed.error) };
  const operator = await authorizeOperator("stop");
  const [result] = await stopThreads([parsed.data.key], operator, parsed.data.reason || "Stop retrying (dashboard)");
  return { ok: true, result };
}
