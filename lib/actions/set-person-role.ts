"use server";

import { z } from "zod";
import { lastAdminRefusal } from "@/lib/auth/people";
import { ROLES } from "@/lib/auth/roles";
import { voidSetupCodes } from "@/lib/auth/setup-code";
import { setRole } from "@/lib/db/people";
import { publishPrincipalsChanged } from "@/lib/server/bus";
import { resolvePerson } from "./resolve-person";
import { fail, formAction } from "./safe-action";

/** Changes a person's role; their API keys follow (a key never exceeds its owner's role). */
export const setPersonRole = formAction(
  {
    name: "person.role",
    access: "admin",
    input: z.object({ personId: z.string().min(1), role: z.enum(ROLES) }),
    resolve: resolvePerson,
    revalidate: "/people",
  },
  async ({ role }, { resolved: person, now }) => {
    if (role === person.role) return { ok: true, from: person.role };
    if (role !== "admin") {
      const refusal = await lastAdminRefusal(person);
      if (refusal) return fail(refusal);
    }
    // Voided first, as every admin's creation does (lib/auth/better-auth.ts).
    if (role === "admin") await voidSetupCodes();
    if (!(await setRole(person.id, role, now))) return fail("No such person.");
    // Their open live streams end at once and reconnect with the new role (a key's follows it).
    publishPrincipalsChanged({ kind: "person", id: person.id });
    return { ok: true, from: person.role };
  },
  ({ role }, result, person) => ({ target: person.email, result: result.ok ? "ok" : "refused", detail: result.ok ? `${result.from} → ${role}` : result.error }),
);
