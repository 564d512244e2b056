"use server";

import { z } from "zod";
import { createPerson, generatePassword, PersonError } from "@/lib/auth/people";
import { ROLES } from "@/lib/auth/roles";
import { fail, formAction } from "./safe-action";

/** The People page's "Add a person": the admin types the first password, or one is generated and shown once. */
export const addPerson = formAction(
  {
    name: "person.create",
    access: "admin",
    input: z.object({
      email: z.string().trim().min(1, "an email is needed").max(200),
      name: z.string().trim().max(100).optional(),
      role: z.enum(ROLES),
      password: z.string().max(200).optional(),
    }),
    revalidate: "/people",
  },
  async ({ email, name, role, password }) => {
    const generated = password ? null : generatePassword();
    try {
      const person = await createPerson({ email, name, role, password: password || generated! });
      return { ok: true, email: person.email, role: person.role, generatedPassword: generated };
    } catch (error) {
      if (error instanceof PersonError) return fail(error.message);
      throw error;
    }
  },
  (_input, result) => (result.ok ? { target: result.email, result: "ok", detail: `role ${result.role}${result.generatedPassword ? "; password generated" : ""}` } : null),
);
