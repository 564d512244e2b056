"use server";

import { z } from "zod";
import { continueThread } from "@/lib/server/continue";
import { action } from "./safe-action";

/** Resume now on an exhausted, failed or broken thread: a `continue` (it writes its own audit entry). */
export const resumeThread = action(
  { name: "resume", input: z.object({ key: z.number().int().positive(), reason: z.string().trim().max(500).optional() }) },
  async ({ key, reason }, { principal, now }) => ({ ok: true, result: await continueThread("resume", key, principal, reason || "Resume now (dashboard)", now) }),
);
