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
