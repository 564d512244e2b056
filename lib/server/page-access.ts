import { redirect } from "next/navigation";
import { cache } from "react";
import type { Principal } from "@/lib/auth/principal";
import { roleAllows, type Role } from "@/lib/auth/roles";
import { authorize } from "./auth";

/**
 * Who is signed in, for the layout and the page of one request (null on the sign-in and setup
 * pages). Looked up once per request: the layout and the page both ask.
 */
export const signedInPrincipal = cache(async (): Promise<Principal | null> => {
  const authorized = await authorize("public", null);
  return authorized.ok ? authorized.caller.principal : null;
});

/**
 * Every page declares the role it needs, like routes and actions: anonymous visitors are sent to
 * sign in (and back here after); a signed-in person whose role is short gets `allowed: false`
 * and the page says what is missing.
 */
export async function pageAccess(needed: Role, here: string): Promise<{ principal: Principal; allowed: boolean }> {
  const principal = await signedInPrincipal();
  if (!principal) redirect(`/sign-in?next=${encodeURIComponent(here)}`);
  return { principal, allowed: roleAllows(principal.role, needed) };
}
