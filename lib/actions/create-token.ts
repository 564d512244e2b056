"use server";

import { revalidatePath } from "next/cache";
import { z } from "zod";
import { describeZodError } from "@/lib/validation";
import { recordAudit } from "@/lib/db/audit";
import { getSource } from "@/lib/db/sources";
import { createSource, createToken, generateToken } from "@/lib/server/tokens";
import { authorizeOperator } from "@/lib/server/auth";

const input = z.object({
  /** An existing source, or none to create a new source named `name`. */
  sourceId: z.string().min(1).optional(),
  name: z.string().trim().min(1).max(100).optional(),
  label: z.string().trim().max(100).optional(),
});

export type CreateTokenState = { ok: true; token: string; sourceName: string } | { ok: false; error: string };

/** Issues an ingest token, shown once (only its hash is stored); optionally for a new source. */
export async function createIngestToken(raw: z.input<typeof input>): Promise<CreateTokenState> {
  const parsed = input.safeParse(raw);
  if (!parsed.success) return { ok: false, error: describeZodError(parsed.error) };
  const operator = await authorizeOperator("create-token");
  let sourceName: string;
  let token: string;
  if (parsed.data.sourceId) {
    const source = await getSource(parsed.data.sourceId);
    if (!source) return { ok: false, error: "No such source." };
    token = (await createToken(source.id, parsed.data.label || null)).token;
    sourceName = source.name;
  } else {
    if (!parsed.data.name) return { ok: false, error: "name: a new source needs a name." };
    token = generateToken();
    sourceName = (await createSource(parsed.data.name, token)).name;
  }
  await recordAudit({ at: Date.now(), actor: operator.name, action: "create-token", target: sourceName, result: "ok", detail: `token ${token.slice(0, 7)}…` });
  revalidatePath("/sources");
  return { ok: true, token, sourceName };
}
