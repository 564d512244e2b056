"use server";

import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { z } from "zod";
import { KNOWN_DEVICE_COOKIE, knownDeviceCookieOptions } from "@/lib/auth/known-device";
import { signIn as signInPerson } from "@/lib/auth/people";
import { clientAddress } from "@/lib/server/edge";
import { localPath } from "@/lib/validation";
import { fail, formAction } from "./safe-action";

export const signIn = formAction(
  {
    name: "sign-in",
    access: "public",
    input: z.object({ email: z.string().trim().min(1, "Enter your email").max(320), password: z.string().min(1, "Enter your password").max(256), next: localPath.optional() }),
  },
  async ({ email, password, next }) => {
    const requestHeaders = new Headers(await headers());
    const result = await signInPerson({ email, password, address: clientAddress(requestHeaders), headers: requestHeaders });
    if (!result.ok) return fail(result.error);
    (await cookies()).set(KNOWN_DEVICE_COOKIE, result.knownDevice, knownDeviceCookieOptions());
    redirect(next ?? "/");
  },
);
