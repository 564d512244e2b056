"use server";

import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { z } from "zod";
import { KNOWN_DEVICE_COOKIE, knownDeviceCookieOptions } from "@/lib/auth/known-device";
import { completeSetup, PersonError, signIn } from "@/lib/auth/people";
import { clientAddress } from "@/lib/server/edge";
import { fail, formAction } from "./safe-action";

/** The one-time setup link: the first admin chooses an email and password, and is signed in. */
export const setUp = formAction(
  {
    name: "setup",
    access: "public",
    input: z.object({
      code: z.string().min(1).max(200),
      email: z.string().trim().min(1, "Enter an email").max(320),
      name: z.string().trim().max(100).optional(),
      password: z.string().max(256),
    }),
  },
  async (input) => {
    try {
      await completeSetup(input);
    } catch (error) {
      if (error instanceof PersonError) return fail(error.message);
      throw error;
    }
    const requestHeaders = new Headers(await headers());
    const result = await signIn({ email: input.email, password: input.password, address: clientAddress(requestHeaders), headers: requestHeaders });
    if (!result.ok) return fail(result.error);
    (await cookies()).set(KNOWN_DEVICE_COOKIE, result.knownDevice, knownDeviceCookieOptions());
    redirect("/");
  },
);
