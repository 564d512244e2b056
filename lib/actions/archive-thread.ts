"use server";

import { z } from "zod";
import { changeVisibility } from "@/lib/server/archive";
import { action } from "./safe-action";

/** Archive (or unarchive) a thread: hidden from the board, its pending resume cancelled (it writes its own audit entry). */
export const archiveThread = action(
  { name: "archive", input: z.object({ key: z.number().int().positive(), archive: z.boolean() }) },
  async ({ key, archive }, { principal, now }) => ({ ok: true, result: await changeVisibility(key, { archive }, principal, now) }),
);
