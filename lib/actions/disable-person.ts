"use server";

import { z } from "zod";
import { lastAdminRefusal } from "@/lib/auth/people";
import { setDisabled } from "@/lib/db/people";
import { publishPrincipalsChanged } from "@/lib/server/bus";
import { resolvePerson } from "./resolve-person";
import { fail, formAction } from "./safe-action";

/** Disables a person: their sessions end and their API keys are revoked at once. */
export const disablePerson = formAction(
  {
    name: "person.disable",
    access: "admin",
    input: z.object({ personId: z.string().min(1) }),
    resolve: resolvePerson,
    revalidate: "/people",
  },
  async (_input, { resolved: person, now }) => {
    const refusal = await lastAdminRefusal(person);
    if (refusal) return fail(refusal);
    if (!(await setDisabled(person.id, true, now))) return fail("No such person.");
    // Their open live streams end at once, sessions and keys alike.
    publishPrincipalsChanged({ kind: "person", id: person.id });
    return { ok: true };
  },
  (_input, result, person) => ({ target: person.email, result: result.ok ? "ok" : "refused", detail: result.ok ? "sessions ended, API keys revoked" : result.error }),
);
