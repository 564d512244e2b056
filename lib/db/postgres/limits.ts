import type pg from "pg";
import type { LimitSnapshot } from "@/lib/ingest/limit-snapshots";
import { limitRow } from "../records/limits";
import { pool } from "./pool";
import { msFromTimestamp, timestampFromMs } from "./time";

/** lib/db/limits.ts's unit-of-work statements on PostgreSQL: a batch's snapshots in one multi-row insert. */

const COLUMNS = ["sourceId", "account", "provider", "window", "usedPercent", "windowMinutes", "resetAt", "status", "observedAt", "threadId", "reachedType"] as const;
const TYPES = ["text", "text", "text", "text", "float8", "int", "float8", "text", "float8", "text", "text"];
const TIMES = new Set(["resetAt", "observedAt"]);
const LIST = COLUMNS.map((c) => `"${c}"`).join(", ");
const SELECTED = COLUMNS.map((c) => (TIMES.has(c) ? timestampFromMs(`"${c}"`) : `"${c}"`)).join(", ");
const ARRAYS = `unnest(${TYPES.map((type, i) => `$${i + 1}::${type}[]`).join(", ")})`;
const INSERT = `INSERT INTO "LimitSnapshot" (${LIST}) SELECT ${SELECTED} FROM ${ARRAYS} AS r(${LIST})`;
// One row per window: of a batch's snapshots of one window, the latest observed (the last given on a tie) is the upsert's.
const UPSERT_CURRENT = `INSERT INTO "LimitWindow" AS w (${LIST})
  SELECT DISTINCT ON ("sourceId", account, provider, "window") ${SELECTED} FROM ${ARRAYS} WITH ORDINALITY AS r(${LIST}, given)
  ORDER BY "sourceId", account, provider, "window", "observedAt" DESC, given DESC
  ON CONFLICT ("sourceId", account, provider, "window") DO UPDATE SET "usedPercent" = excluded."usedPercent", "windowMinutes" = excluded."windowMinutes",
    "resetAt" = excluded."resetAt", status = excluded.status, "observedAt" = excluded."observedAt", "threadId" = excluded."threadId", "reachedType" = excluded."reachedType"
  WHERE excluded."observedAt" >= w."observedAt"`;

/** lib/db/limits.ts's RESET_BETWEEN. */
const RESET_BETWEEN = `SELECT ${msFromTimestamp('"resetAt"')} AS "resetAt" FROM "LimitWindow"
  WHERE "sourceId" = $1 AND "resetAt" BETWEEN ${timestampFromMs("$4")} AND ${timestampFromMs("$5")} AND ($2::text IS NULL OR provider = $2)
  ORDER BY coalesce("threadId" = $3, false) DESC, "resetAt" DESC LIMIT 1`;

export function limitRowsOn(client: pg.ClientBase) {
  return {
    async saveLimitSnapshots(sourceId: string, snapshots: LimitSnapshot[]): Promise<void> {
      if (!snapshots.length) return;
      const rows = snapshots.map((s) => limitRow(sourceId, s));
      const arrays = COLUMNS.map((column) => rows.map((row) => row[column]));
      await client.query(INSERT, arrays);
      await client.query(UPSERT_CURRENT, arrays);
    },

    async windowResetBetween(sourceId: string, thread: { externalId: string; provider: string | null }, from: number, to: number): Promise<number | null> {
      const { rows } = await client.query<{ resetAt: string }>(RESET_BETWEEN, [sourceId, thread.provider, thread.externalId, from, to]);
      return rows[0] ? Number(rows[0].resetAt) : null;
    },
  };
}

/** lib/db/limits.ts's retention of snapshots, on PostgreSQL. */
const PRUNE = `DELETE FROM "LimitSnapshot" WHERE id IN (SELECT id FROM "LimitSnapshot" WHERE "observedAt" < ${timestampFromMs("$1")} ORDER BY "observedAt" LIMIT $2)`;

export async function pruneLimitSnapshots(cutoff: number, limit: number): Promise<number> {
  return (await pool().query(PRUNE, [cutoff, limit])).rowCount ?? 0;
}
