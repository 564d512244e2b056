"use server";

import { z } from "zod";
import { getSource, updateSourceSettings } from "@/lib/db/sources";
import { PRESET_NAMES } from "@/lib/retry";
import { applySourceSettings } from "@/lib/server/pipeline";
import { fail, formAction } from "./safe-action";

const onOff = (on: boolean) => (on ? "on" : "off");

/** A source's policy preset and its capacity-recovery and resume-at-reset opt-ins (both off by default). */
export const updateSource = formAction(
  {
    name: "update-source",
    access: "admin",
    input: z.object({
      sourceId: z.string().min(1),
      policy: z.union([z.enum(PRESET_NAMES as [string, ...string[]]), z.literal("")]),
      /** A checkbox: present ("on") when ticked. */
      capacityRecovery: z.literal("on").optional().transform((value) => value === "on"),
      resumeAtReset: z.literal("on").optional().transform((value) => value === "on"),
    }),
    resolve: async ({ sourceId }) => (await getSource(sourceId)) ?? fail("No such source."),
    revalidate: "/sources",
  },
  async ({ policy, capacityRecovery, resumeAtReset }, { resolved: before }) => {
    await updateSourceSettings(before.id, { policy: policy || null, capacityRecovery, resumeAtReset });
    await applySourceSettings((await getSource(before.id))!);
    return { ok: true };
  },
  ({ policy, capacityRecovery, resumeAtReset }, _result, before) => ({
    target: before.name,
    result: "ok",
    detail:
      `policy ${before.policy ?? "default"} → ${policy || "default"}; capacity recovery ${onOff(before.capacityRecovery)} → ${onOff(capacityRecovery)}` +
      `; resume at reset ${onOff(before.resumeAtReset)} → ${onOff(resumeAtReset)}`,
  }),
);
