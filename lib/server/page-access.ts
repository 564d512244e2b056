import { redirect } from "next/navigation";
import type { Principal } from "@/lib/auth/principal";
import { roleAllows, type Role } from "@/lib/auth/roles";
import { authorize } from "./auth";

/**
 * Every page declares the role it needs, like routes and actions: anonymous visitors are sent to
 * sign in (and back here after); a signed-in person whose role is short gets `allowed: false`
 * and the page says what is missing.
 */
export async function pageAccess(needed: Role, here: string): Promise<{ principal: Principal; allowed: boolean }> {
  const authorized = await authorize("public", null);
  const principal = authorized.ok ? authorized.caller.principal : null;
  if (!principal) redirect(`/sign-in?next=${encodeURIComponent(here)}`);
  return { principal, allowed: roleAllows(principal.role, needed) };
}

/** Who is signed in, for the layout (null on the sign-in and setup pages). */
export async function signedInPrincipal(): Promise<Principal | null> {
  const authorized = await authorize("public", null);
  return authorized.ok ? authorized.caller.principal : null;
}
