"use server";

import { z } from "zod";
import { changeVisibility } from "@/lib/server/archive";
import { action } from "./safe-action";

/** Snooze a thread until a time (null: wake it now); it writes its own audit entry. */
export const snoozeThread = action(
  { name: "snooze", input: z.object({ key: z.number().int().positive(), until: z.iso.datetime({ offset: true }).nullable() }) },
  async ({ key, until }, { principal, now }) => ({ ok: true, result: await changeVisibility(key, { snoozeUntil: until === null ? null : Date.parse(until) }, principal, now) }),
);
