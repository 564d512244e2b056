import type { Role } from "./roles";

/** The single sign-on provider's id in the authentication library. */
export const OIDC_PROVIDER_ID = "oidc";
/** Where the provider sends people back: register `<public URL>` + this as the client's redirect URI. */
export const SSO_CALLBACK_PATH = `/api/auth/callback/${OIDC_PROVIDER_ID}`;

/** The claim → role mapping for people signing in through OpenID Connect. */
export interface ClaimMapping {
  roleClaim: string;
  adminValues: string[];
  operatorValues: string[];
}

/** The role the claims give: admin or operator when a value matches, viewer otherwise. */
export function roleForClaims(claims: Record<string, unknown>, mapping: ClaimMapping): Role {
  const raw = claims[mapping.roleClaim];
  const values = Array.isArray(raw) ? raw.map(String) : typeof raw === "string" ? raw.split(/[\s,]+/) : [];
  if (values.some((v) => mapping.adminValues.includes(v))) return "admin";
  if (values.some((v) => mapping.operatorValues.includes(v))) return "operator";
  return "viewer";
}

/**
 * What /sign-in says when single sign-on came back with an error (`?error=` from the callback):
 * an existing person whose email the provider did not verify is the one a person can act on.
 */
export function ssoFailureMessage(error: string | undefined): string | null {
  if (!error) return null;
  if (error === "account_not_linked") {
    return "A person with this email already exists here, and single sign-on joins an existing person only when the provider has verified the email. Sign in with your password, or ask an admin.";
  }
  return "Single sign-on did not complete. Try again, or ask an admin.";
}
