"use server";

import { redirect } from "next/navigation";
import { z } from "zod";
import { auth } from "@/lib/auth/better-auth";
import { OIDC_PROVIDER_ID } from "@/lib/auth/sso";
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
    // The OIDC provider is registered by the generic OAuth plugin as a social provider (only when
    // configured, so its id is not in the static type); the state cookie reaches the browser
    // through nextCookies().
    const api = (await auth()).api as unknown as { signInSocial(call: { body: Record<string, unknown> }): Promise<{ url?: string }> };
    const started = await api.signInSocial({ body: { provider: OIDC_PROVIDER_ID, callbackURL: next ?? "/", errorCallbackURL: "/sign-in", disableRedirect: true } });
    if (!started.url) return fail("Single sign-on could not start: the provider gave no sign-in address.");
    redirect(started.url);
  },
);
