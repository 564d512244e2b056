"use server";

import { z } from "zod";
import { setDisabled } from "@/lib/db/people";
import { resolvePerson } from "./resolve-person";
import { fail, formAction } from "./safe-action";

/** Lets a disabled person sign in again (their revoked keys stay revoked). */
export const enablePerson = formAction(
  {
    name: "person.enable",
    access: "admin",
    input: z.object({ personId: z.string().min(1) }),
    resolve: resolvePerson,
    revalidate: "/people",
  },
  async (_input, { resolved: person, now }) => ((await setDisabled(person.id, false, now)) ? { ok: true } : fail("No such person.")),
  (_input, result, person) => ({ target: person.email, result: result.ok ? "ok" : "not-found" }),
);
