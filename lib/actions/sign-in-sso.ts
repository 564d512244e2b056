"use server";

import { redirect } from "next/navigation";
import { z } from "zod";
import { auth, OIDC_PROVIDER_ID } from "@/lib/auth/better-auth";
import { oidcSettings } from "@/lib/config";
import { localPath } from "@/lib/validation";
import { fail, formAction } from "./safe-action";

/**
 * Single sign-on: sends the browser to the OpenID Connect provider, and back to `next` after (or
 * to /sign-in with the callback's `?error=`).
 */
export const signInWithSso = formAction(
  { name: "sign-in", access: "public", input: z.object({ next: localPath.optional() }) },
  async ({ next }) => {
    if (!oidcSettings()) return fail("Single sign-on is not configured (RADAR_OIDC_ISSUER, RADAR_OIDC_CLIENT_ID, RADAR_OIDC_CLIENT_SECRET).");
    // The OIDC plugin is only installed when configured, so its endpoint is not in the static type.
    const api = (await auth()).api as unknown as { signInWithOAuth2(call: { body: Record<string, string> }): Promise<{ url: string }> };
    const started = await api.signInWithOAuth2({ body: { providerId: OIDC_PROVIDER_ID, callbackURL: next ?? "/", errorCallbackURL: "/sign-in" } });
    redirect(started.url);
  },
);
