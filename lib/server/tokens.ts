import { generateCredential, hashCredential } from "@/lib/auth/credentials";
import { addToken, createSource as storeSource, firstSource, sourceForTokenHash, tokenStatus, type SourceRecord, type StoredToken } from "@/lib/db/sources";

/** Ingest tokens are random secrets shown once; only their SHA-256 is stored (lib/auth/credentials.ts). */
export const hashToken = hashCredential;

export function generateToken(): string {
  return generateCredential("ingest-token");
}

/** What is kept of a token: its hash, the prefix people recognise it by, and its label. */
export const storedToken = (token: string, label: string | null): StoredToken => ({ tokenHash: hashToken(token), prefix: token.slice(0, 7), label });

export function createSource(name: string, token: string, now = Date.now()): Promise<SourceRecord> {
  return storeSource(name, storedToken(token, "initial"), now);
}

/** Issues a new token for a source; the caller shows it once. */
export async function createToken(sourceId: string, label: string | null, now = Date.now()): Promise<{ id: string; token: string }> {
  const token = generateToken();
  return { id: await addToken(sourceId, storedToken(token, label), now), token };
}

/** The source an ingest token belongs to, or null for an unknown or revoked token. */
export function sourceForToken(token: string): Promise<SourceRecord | null> {
  return sourceForTokenHash(hashToken(token));
}

/**
 * On first start the database has no source: create "default" with RADAR_INGEST_TOKEN (or a
 * generated token). Returns the token only when it was created now, so it is printed once.
 */
export async function ensureDefaultSource(configuredToken: string | undefined): Promise<{ source: SourceRecord; token: string | null }> {
  const existing = await firstSource();
  if (existing) {
    // A configured token that is not known yet is added to the first source, so changing
    // RADAR_INGEST_TOKEN between restarts works as an operator expects.
    if (configuredToken) {
      const status = await tokenStatus(hashToken(configuredToken));
      if (status === "unknown") await addToken(existing.id, storedToken(configuredToken, "RADAR_INGEST_TOKEN"), Date.now());
      else if (status === "revoked") {
        // An operator revoked it: setting it again in the environment does not bring it back.
        process.stderr.write("[radar] RADAR_INGEST_TOKEN was revoked on the Sources page; it stays revoked. Set a new one.\n");
      }
    }
    return { source: existing, token: null };
  }
  const token = configuredToken || generateToken();
  return { source: await createSource("default", token), token };
}
