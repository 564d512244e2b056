import crypto from "node:crypto";
import type { SourceOverview } from "@/lib/wire/types";
import { db } from "./client";

/** Ingest tokens are random secrets shown once; only their SHA-256 is stored. */
export function hashToken(token: string): string {
  return crypto.createHash("sha256").update(token).digest("hex");
}

export function generateToken(): string {
  return `rr_${crypto.randomBytes(24).toString("base64url")}`;
}

export interface SourceRecord {
  id: string;
  name: string;
  policy: string | null;
  capacityRecovery: boolean;
}

interface SourceRow {
  id: string;
  name: string;
  policy: string | null;
  capacityRecovery: number;
}

const toSource = (row: SourceRow): SourceRecord => ({ ...row, capacityRecovery: row.capacityRecovery === 1 });

export function createSource(name: string, token: string, now = Date.now()): SourceRecord {
  const { sql } = db();
  const id = crypto.randomUUID();
  sql.transaction(() => {
    sql.prepare(`INSERT INTO "Source" (id, name, createdAt, capacityRecovery) VALUES (?, ?, ?, 0)`).run(id, name, now);
    insertToken(id, token, "initial", now);
  })();
  return { id, name, policy: null, capacityRecovery: false };
}

function insertToken(sourceId: string, token: string, label: string | null, now: number): string {
  const id = crypto.randomUUID();
  db()
    .sql.prepare(`INSERT INTO "IngestToken" (id, sourceId, tokenHash, prefix, label, createdAt) VALUES (?, ?, ?, ?, ?, ?)`)
    .run(id, sourceId, hashToken(token), token.slice(0, 7), label, now);
  return id;
}

/** Issues a new token for a source; the caller shows it once. */
export function createToken(sourceId: string, label: string | null, now = Date.now()): { id: string; token: string } {
  const token = generateToken();
  return { id: insertToken(sourceId, token, label, now), token };
}

export function revokeToken(tokenId: string, now = Date.now()): boolean {
  return db().sql.prepare(`UPDATE "IngestToken" SET revokedAt = ? WHERE id = ? AND revokedAt IS NULL`).run(now, tokenId).changes === 1;
}

/**
 * On first start the database has no source: create "default" with RADAR_INGEST_TOKEN (or a
 * generated token). Returns the token only when it was created now, so it is printed once.
 */
export function ensureDefaultSource(configuredToken: string | undefined): { source: SourceRecord; token: string | null } {
  const { sql } = db();
  const existing = sql.prepare(`SELECT id, name, policy, capacityRecovery FROM "Source" ORDER BY createdAt LIMIT 1`).get() as
    | SourceRow
    | undefined;
  if (existing) {
    // A configured token that is not known yet is added to the first source, so changing
    // RADAR_INGEST_TOKEN between restarts works as an operator expects.
    if (configuredToken) {
      const known = sql.prepare(`SELECT revokedAt FROM "IngestToken" WHERE tokenHash = ?`).get(hashToken(configuredToken)) as
        | { revokedAt: number | null }
        | undefined;
      if (!known) insertToken(existing.id, configuredToken, "RADAR_INGEST_TOKEN", Date.now());
      else if (known.revokedAt !== null) {
        // An operator revoked it: setting it again in the environment does not bring it back.
        process.stderr.write("[radar] RADAR_INGEST_TOKEN was revoked on the Sources page; it stays revoked. Set a new one.\n");
      }
    }
    return { source: toSource(existing), token: null };
  }
  const token = configuredToken || generateToken();
  return { source: createSource("default", token), token };
}

/** The source an ingest token belongs to, or null for an unknown or revoked token. */
export function sourceForToken(token: string): SourceRecord | null {
  const row = db()
    .sql.prepare(
      `SELECT s.id, s.name, s.policy, s.capacityRecovery FROM "IngestToken" t JOIN "Source" s ON s.id = t.sourceId
       WHERE t.tokenHash = ? AND t.revokedAt IS NULL`,
    )
    .get(hashToken(token)) as SourceRow | undefined;
  return row ? toSource(row) : null;
}

export function getSource(id: string): SourceRecord | null {
  const row = db().sql.prepare(`SELECT id, name, policy, capacityRecovery FROM "Source" WHERE id = ?`).get(id) as SourceRow | undefined;
  return row ? toSource(row) : null;
}

export function updateSourceSettings(id: string, settings: { policy?: string | null; capacityRecovery?: boolean }): void {
  const { sql } = db();
  if (settings.policy !== undefined) sql.prepare(`UPDATE "Source" SET policy = ? WHERE id = ?`).run(settings.policy, id);
  if (settings.capacityRecovery !== undefined)
    sql.prepare(`UPDATE "Source" SET capacityRecovery = ? WHERE id = ?`).run(settings.capacityRecovery ? 1 : 0, id);
}

/** The Sources page: every source with its activity and its tokens (never the secrets). */
export async function listSourceOverviews(): Promise<SourceOverview[]> {
  const { prisma } = db();
  const sources = await prisma.source.findMany({
    orderBy: { createdAt: "asc" },
    include: { tokens: { orderBy: { createdAt: "asc" } }, _count: { select: { events: true, threads: true } } },
  });
  return sources.map((source) => ({
    id: source.id,
    name: source.name,
    policy: source.policy,
    capacityRecovery: source.capacityRecovery,
    createdAt: source.createdAt.toISOString(),
    lastSeenAt: source.lastSeenAt?.toISOString() ?? null,
    events: source._count.events,
    threads: source._count.threads,
    tokens: source.tokens.map((token) => ({
      id: token.id,
      prefix: token.prefix,
      label: token.label,
      createdAt: token.createdAt.toISOString(),
      revokedAt: token.revokedAt?.toISOString() ?? null,
    })),
  }));
}
