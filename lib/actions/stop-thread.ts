"use server";

import { z } from "zod";
import { stopThreads } from "@/lib/server/stop";
import { action } from "./safe-action";

/** The board's and the thread page's Stop retrying button (the stop writes its own audit entries). */
export const stopThread = action(
  { name: "stop", input: z.object({ key: z.number().int().positive(), reason: z.string().trim().max(500).optional() }) },
  async ({ key, reason }, { principal, now }) => {
    const [result] = await stopThreads([key], principal, reason || "Stop retrying (dashboard)", now);
    return { ok: true, result };
  },
);
