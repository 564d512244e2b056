"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { describeZodError } from "@/lib/validation";
import { recordAudit } from "@/lib/db/audit";
import { revokeToken } from "@/lib/db/sources";
import { authorizeOperator } from "@/lib/server/auth";

const input = z.object({ tokenId: z.string().min(1), reason: z.string().trim().max(500).optional() });

export type RevokeTokenState = { ok: true } | { ok: false; error: string };

export async function revokeIngestToken(raw: z.input<typeof input>): Promise<RevokeTokenState> {
  const parsed = input.safeParse(raw);
  if (!parsed.success) return { ok: false, error: describeZodError(parsed.error) };
  const operator = await authorizeOperator("revoke-token");
  const revoked = await revokeToken(parsed.data.tokenId);
  await recordAudit({
    at: Date.now(),
    actor: operator.name,
    action: "revoke-token",
    target: parsed.data.tokenId,
    reason: parsed.data.reason ?? null,
    result: revoked ? "ok" : "not-found",
  });
  revalidatePath("/sources");
  return revoked ? { ok: true } : { ok: false, error: "That token does not exist or is already revoked." };
}
