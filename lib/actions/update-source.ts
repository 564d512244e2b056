"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { describeZodError } from "@/lib/validation";
import { recordAudit } from "@/lib/db/audit";
import { getSource, updateSourceSettings } from "@/lib/db/sources";
import { PRESET_NAMES } from "@/lib/retry";
import { authorizeOperator } from "@/lib/server/auth";
import { applySourceSettings } from "@/lib/server/pipeline";

const input = z.object({
  sourceId: z.string().min(1),
  policy: z.union([z.enum(PRESET_NAMES as [string, ...string[]]), z.literal("")]),
  capacityRecovery: z.boolean(),
});

export type UpdateSourceState = { ok: true } | { ok: false; error: string };

/** A source's policy preset and capacity-recovery opt-in (off by default). */
export async function updateSource(raw: z.input<typeof input>): Promise<UpdateSourceState> {
  const parsed = input.safeParse(raw);
  if (!parsed.success) return { ok: false, error: describeZodError(parsed.error) };
  const operator = await authorizeOperator("update-source");
  const before = await getSource(parsed.data.sourceId);
  if (!before) return { ok: false, error: "No such source." };
  await updateSourceSettings(before.id, { policy: parsed.data.policy || null, capacityRecovery: parsed.data.capacityRecovery });
  const after = (await getSource(before.id))!;
  await applySourceSettings(after);
  await recordAudit({
    at: Date.now(),
    actor: operator.name,
    action: "update-source",
    target: before.name,
    result: "ok",
    detail: `policy ${before.policy ?? "default"} → ${after.policy ?? "default"}; capacity recovery ${before.capacityRecovery ? "on" : "off"} → ${after.capacityRecovery ? "on" : "off"}`,
  });
  revalidatePath("/sources");
  return { ok: true };
}
