import type { Role } from "./roles";

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
