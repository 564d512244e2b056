"use server";

import { z } from "zod";
import { unlock } from "@/lib/auth/people";
import { resolvePerson } from "./resolve-person";
import { formAction } from "./safe-action";

/** Lifts a person's sign-in lockout. */
export const unlockPerson = formAction(
  {
    name: "person.unlock",
    access: "admin",
    input: z.object({ personId: z.string().min(1) }),
    resolve: resolvePerson,
    revalidate: "/people",
  },
  async (_input, { resolved: person }) => ({ ok: true, wasLocked: await unlock(person.email) }),
  (_input, result, person) => ({ target: person.email, result: "ok", detail: result.ok && !result.wasLocked ? "was not locked" : null }),
);
