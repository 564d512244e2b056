"use server";

import { z } from "zod";
import { ApiKeyError, createApiKey } from "@/lib/auth/api-keys";
import { ROLES } from "@/lib/auth/roles";
import { fail, formAction } from "./safe-action";

/** The People page's "Create API key": owned by the admin who makes it, shown once. */
export const addApiKey = formAction(
  {
    name: "key.create",
    access: "admin",
    input: z.object({ name: z.string().trim().min(1, "a key needs a name").max(64), role: z.enum(ROLES) }),
    revalidate: "/people",
  },
  async ({ name, role }, { principal, now }) => {
    if (!principal.personId) return fail("Only a signed-in person can make a key here; use `npm run keys -- create` for a service account.");
    try {
      const { key } = await createApiKey({ name, role, owner: { id: principal.personId, role: principal.role } }, now);
      return { ok: true, key, name, role };
    } catch (error) {
      if (error instanceof ApiKeyError) return fail(error.message);
      throw error;
    }
  },
  ({ name, role }, result) => (result.ok ? { target: name, result: "ok", detail: `role ${role}; ${result.key.slice(0, 8)}…` } : null),
);
