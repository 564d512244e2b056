"use server";

import { z } from "zod";
import { unlock, unlockAddress } from "@/lib/auth/people";
import { resolvePerson } from "./resolve-person";
import { formAction } from "./safe-action";

/** Lifts a person's sign-in lockout: their failed sign-ins, from every address, are forgotten. */
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

/** Lifts a client address's lockout (everyone behind one NAT shares it): its failed sign-ins are forgotten. */
export const unlockSignInAddress = formAction(
  {
    name: "address.unlock",
    access: "admin",
    input: z.object({ address: z.string().trim().min(1, "Which address?").max(100) }),
    revalidate: "/people",
  },
  async ({ address }) => ({ ok: true, hadFailures: await unlockAddress(address) }),
  ({ address }, result) => ({ target: address, result: "ok", detail: result.ok && !result.hadFailures ? "had no failed sign-ins" : "failed sign-ins forgotten" }),
);
