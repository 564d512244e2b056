"use server";

import { z } from "zod";
import { revokeToken } from "@/lib/db/sources";
import { fail, formAction } from "./safe-action";

export const revokeIngestToken = formAction(
  {
    name: "revoke-token",
    access: "admin",
    input: z.object({ tokenId: z.string().min(1), reason: z.string().trim().max(500).optional() }),
    revalidate: "/sources",
  },
  async ({ tokenId }) => ((await revokeToken(tokenId)) ? { ok: true } : fail("That token does not exist or is already revoked.")),
  ({ tokenId, reason }, result) => ({ target: tokenId, reason: reason ?? null, result: result.ok ? "ok" : "not-found" }),
);
