"use server";

import { z } from "zod";
import { continueThread } from "@/lib/server/continue";
import { action } from "./safe-action";

/** Retry now on a thread waiting out a backoff: interrupt, then `continue` (it writes its own audit entry). */
export const retryThreadNow = action(
  { name: "retry-now", input: z.object({ key: z.number().int().positive(), reason: z.string().trim().max(500).optional() }) },
  async ({ key, reason }, { principal, now }) => ({ ok: true, result: await continueThread("retry-now", key, principal, reason || "Retry now (dashboard)", now) }),
);
