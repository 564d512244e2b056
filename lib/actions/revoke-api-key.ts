"use server";

import { z } from "zod";
import { revokeApiKeys } from "@/lib/db/api-keys";
import { publishPrincipalsChanged } from "@/lib/server/bus";
import { fail, formAction } from "./safe-action";

export const revokeApiKey = formAction(
  {
    name: "key.revoke",
    access: "admin",
    input: z.object({ keyId: z.string().min(1) }),
    revalidate: "/people",
  },
  async ({ keyId }, { now }) => {
    const [revoked] = await revokeApiKeys({ id: keyId }, now);
    // Its open live streams end at once.
    if (revoked) publishPrincipalsChanged({ kind: "key", id: revoked.id });
    return revoked ? { ok: true, name: revoked.name } : fail("That key does not exist or is already revoked.");
  },
  ({ keyId }, result) => ({ target: result.ok ? result.name : keyId, result: result.ok ? "ok" : "not-found" }),
);
