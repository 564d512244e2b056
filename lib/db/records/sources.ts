import { threadControl, type ThreadControl } from "@/lib/threads/control";
import type { SourceOverview } from "@/lib/wire/types";
import type { DatabaseHandles } from "../client";

/** Sources as both stores' statements answer them (lib/db/sources.ts, lib/db/postgres/sources.ts). */

export interface SourceRecord {
  id: string;
  name: string;
  policy: string | null;
  capacityRecovery: boolean;
  resumeAtReset: boolean;
  /** Incident thresholds of its own; null is the global setting. */
  incidentMinThreads: number | null;
  incidentWindowMs: number | null;
}

/** A token as stored: its hash, the first characters shown to tell tokens apart, a label. */
export interface StoredToken {
  tokenHash: string;
  prefix: string;
  label: string | null;
}

/** Incident thresholds: both given together; null is the global setting. */
export interface IncidentThresholds {
  incidentMinThreads: number | null;
  incidentWindowMs: number | null;
}

/** The sources that set their own incident thresholds, as the detector takes them. */
export function incidentSettingsOf(rows: readonly ({ id: string } & IncidentThresholds)[]) {
  return new Map(
    rows.map((row) => [row.id, { ...(row.incidentMinThreads !== null && { minThreads: row.incidentMinThreads }), ...(row.incidentWindowMs !== null && { windowMs: row.incidentWindowMs }) }]),
  );
}

/** What an admin changes of a source (absent: unchanged). */
export interface SourceSettings {
  policy?: string | null;
  capacityRecovery?: boolean;
  resumeAtReset?: boolean;
  incidents?: IncidentThresholds;
}

/** A source just created: no settings of its own yet. */
export const newSource = (id: string, name: string): SourceRecord => ({
  id,
  name,
  policy: null,
  capacityRecovery: false,
  resumeAtReset: false,
  incidentMinThreads: null,
  incidentWindowMs: null,
});

/** What a source stores: its events and their payload bytes (raw and normalized). */
export interface SourceUsage {
  events: number;
  bytes: number;
}

/** A token hash's status from its row (absent: never issued). */
export const tokenStatusOf = (row: { revokedAt: unknown } | undefined): "unknown" | "active" | "revoked" =>
  !row ? "unknown" : row.revokedAt === null ? "active" : "revoked";

/*
 * The Prisma reads of sources: both generated clients have the same models and answer these the
 * same way, so each store passes its own client (typed as the SQLite one, as lib/db/store-prisma.ts does).
 */
type Prisma = DatabaseHandles["prisma"];

/** What each thread's source can carry out, with the thread's own id, by thread key (missing threads are absent). */
export async function threadControlsThrough(prisma: Prisma, keys: number[]): Promise<Map<number, ThreadControl & { threadId: string }>> {
  const rows = await prisma.thread.findMany({
    where: { id: { in: keys } },
    select: { id: true, externalId: true, source: { select: { capabilities: true, lastPolledAt: true, lastOtlpAt: true } } },
  });
  return new Map(rows.map((row) => [row.id, { ...threadControl(row.source), threadId: row.externalId }]));
}

/** The Sources page: every source with its activity and its tokens (never the secrets). */
export async function sourceOverviewsThrough(prisma: Prisma): Promise<SourceOverview[]> {
  const sources = await prisma.source.findMany({
    orderBy: { createdAt: "asc" },
    include: { tokens: { orderBy: { createdAt: "asc" } }, usage: true, _count: { select: { threads: true } } },
  });
  return sources.map((source) => ({
    id: source.id,
    name: source.name,
    policy: source.policy,
    capacityRecovery: source.capacityRecovery,
    resumeAtReset: source.resumeAtReset,
    incidentMinThreads: source.incidentMinThreads,
    incidentWindowMs: source.incidentWindowMs,
    createdAt: source.createdAt.toISOString(),
    lastSeenAt: source.lastSeenAt?.toISOString() ?? null,
    lastOtlpAt: source.lastOtlpAt?.toISOString() ?? null,
    events: source.usage?.events ?? 0,
    bytes: Number(source.usage?.bytes ?? 0),
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
