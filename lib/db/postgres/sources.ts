import type pg from "pg";
import type { IncidentSettingsBySource } from "@/lib/retry";
import { engineReach, type EngineReach, type SourceReach } from "@/lib/threads/control";
import { incidentSettingsOf, type IncidentThresholds } from "../records/sources";
import { msFromTimestamp, timestampFromMs } from "./time";

/** lib/db/sources.ts's unit-of-work statements on PostgreSQL. GREATEST skips a NULL, as SQLite's max(coalesce(x, 0), ?) does here. */

const TOUCH = `UPDATE "Source" SET "lastSeenAt" = GREATEST("lastSeenAt", ${timestampFromMs("$1")}) WHERE id = $2`;
const TOUCH_OTLP = `UPDATE "Source" SET "lastOtlpAt" = GREATEST("lastOtlpAt", ${timestampFromMs("$1")}) WHERE id = $2`;
const REACH = `SELECT capabilities, ${msFromTimestamp(`"lastPolledAt"`)} AS "lastPolledAt", ${msFromTimestamp(`"lastOtlpAt"`)} AS "lastOtlpAt" FROM "Source" WHERE id = $1`;
const INCIDENT_THRESHOLDS = `SELECT id, "incidentMinThreads", "incidentWindowMs" FROM "Source" WHERE "incidentMinThreads" IS NOT NULL OR "incidentWindowMs" IS NOT NULL`;

export function sourceRowsOn(client: pg.ClientBase) {
  return {
    async touchSource(sourceId: string, at: number): Promise<void> {
      await client.query(TOUCH, [at, sourceId]);
    },

    async sourceReach(sourceId: string): Promise<EngineReach> {
      const { rows } = await client.query<SourceReach>(REACH, [sourceId]);
      return engineReach(rows[0] ?? { capabilities: null, lastPolledAt: null, lastOtlpAt: null });
    },

    async sourceIncidentSettings(): Promise<IncidentSettingsBySource> {
      return incidentSettingsOf((await client.query<{ id: string } & IncidentThresholds>(INCIDENT_THRESHOLDS)).rows);
    },

    async touchOtlp(sourceId: string, at: number): Promise<void> {
      await client.query(TOUCH_OTLP, [at, sourceId]);
    },
  };
}
