import crypto from "node:crypto";

/**
 * Bearer credentials: ingest tokens (a source's, `rr_…`) and API keys (a person's or a service
 * account's, `rrk_…`). Distinct prefixes, so one is never taken for the other. Both are random
 * secrets shown once; only their SHA-256 is stored (they carry 192+ bits of randomness, so a
 * fast hash is enough, unlike a password).
 */
export const INGEST_TOKEN_PREFIX = "rr_";
export const API_KEY_PREFIX = "rrk_";

export type CredentialKind = "ingest-token" | "api-key";

export function credentialKind(secret: string): CredentialKind {
  return secret.startsWith(API_KEY_PREFIX) ? "api-key" : "ingest-token";
}

export function hashCredential(secret: string): string {
  return crypto.createHash("sha256").update(secret).digest("hex");
}

export function generateCredential(kind: CredentialKind): string {
  return `${kind === "api-key" ? API_KEY_PREFIX : INGEST_TOKEN_PREFIX}${crypto.randomBytes(24).toString("base64url")}`;
}

/** The bearer credential of a request, or null when there is none. */
export function bearer(request: Request | Headers): string | null {
  const header = (request instanceof Headers ? request : request.headers).get("authorization");
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match ? match[1] : null;
}
