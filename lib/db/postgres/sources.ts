import type pg from "pg";
import type { IncidentSettingsBySource } from "@/lib/retry";
import { engineReach, type EngineReach, type SourceReach } from "@/lib/threads/control";
import type { SourceOverview } from "@/lib/wire/types";
import type { ThreadControl } from "@/lib/threads/control";
import type { DatabaseHandles } from "../client";
import {
  incidentSettingsOf, newSource, sourceOverviewsThrough, threadControlsThrough, tokenStatusOf,
  type IncidentThresholds, type SourceRecord, type SourceSettings, type SourceUsage, type StoredToken,
} from "../records/sources";
import { postgresPrisma } from "./client";
import { inTransaction, pool } from "./pool";
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

/* lib/db/sources.ts's writes outside a unit of work, on PostgreSQL. */

const INSERT_SOURCE = `INSERT INTO "Source" (id, name, "createdAt", "capacityRecovery") VALUES ($1, $2, ${timestampFromMs("$3")}, false)`;
const INSERT_TOKEN = `INSERT INTO "IngestToken" (id, "sourceId", "tokenHash", prefix, label, "createdAt") VALUES ($1, $2, $3, $4, $5, ${timestampFromMs("$6")})`;
const REVOKE_TOKEN = `UPDATE "IngestToken" SET "revokedAt" = ${timestampFromMs("$1")} WHERE id = $2 AND "revokedAt" IS NULL`;
const POLLED = `UPDATE "Source" SET "lastPolledAt" = GREATEST("lastPolledAt", ${timestampFromMs("$1")}) WHERE id = $2`;
const POLLED_ANNOUNCING = `UPDATE "Source" SET "lastPolledAt" = GREATEST("lastPolledAt", ${timestampFromMs("$1")}), capabilities = $2 WHERE id = $3`;
// The tally row is created on first use and locked: two instances never count one range twice.
const TALLY = `INSERT INTO "UsageTally" (id, "countedThrough") VALUES (1, 0) ON CONFLICT (id) DO NOTHING`;
const COUNTED_THROUGH = `SELECT "countedThrough" FROM "UsageTally" WHERE id = 1 FOR UPDATE`;
const LAST_EVENT_ID = `SELECT coalesce(max(id), 0) AS last FROM "Event" WHERE id <= $1`;
const EVENT_IDS = `pg_get_serial_sequence('"Event"', 'id')::regclass`;
const DRAWN_THROUGH = `SELECT coalesce(pg_sequence_last_value(${EVENT_IDS}), 0)::bigint AS drawn`;
const DRAWING = `SELECT DISTINCT virtualtransaction AS v FROM pg_locks
  WHERE locktype = 'relation' AND relation = ${EVENT_IDS} AND mode = 'RowExclusiveLock' AND pid IS DISTINCT FROM pg_backend_pid()`;
const STILL_DRAWING = `SELECT 1 FROM pg_locks WHERE locktype = 'relation' AND relation = ${EVENT_IDS} AND virtualtransaction = ANY($1) LIMIT 1`;
const SETTLE_TRIES = 20;
const SETTLE_PAUSE_MS = 25;
const COUNT_RANGE = `INSERT INTO "SourceUsage" ("sourceId", events, bytes)
  SELECT "sourceId", count(*), sum(octet_length(raw) + octet_length(normalized)) FROM "Event" WHERE id > $1 AND id <= $2 GROUP BY "sourceId"
  ON CONFLICT ("sourceId") DO UPDATE SET events = "SourceUsage".events + excluded.events, bytes = "SourceUsage".bytes + excluded.bytes`;
const SET_COUNTED_THROUGH = `UPDATE "UsageTally" SET "countedThrough" = $1 WHERE id = 1`;

async function insertToken(client: pg.ClientBase | pg.Pool, sourceId: string, token: StoredToken, now: number): Promise<string> {
  const id = crypto.randomUUID();
  await client.query(INSERT_TOKEN, [id, sourceId, token.tokenHash, token.prefix, token.label, now]);
  return id;
}

export async function createSource(name: string, token: StoredToken, now = Date.now()): Promise<SourceRecord> {
  return newSource(await inTransaction((client) => insertSourceOn(client, name, token, now)), name);
}

/** A source and its token through a connection given, inside the caller's transaction (as insertSourceInto on SQLite); returns its id. */
export async function insertSourceOn(client: pg.ClientBase, name: string, token: StoredToken, now: number): Promise<string> {
  const id = crypto.randomUUID();
  await client.query(INSERT_SOURCE, [id, name, now]);
  await insertToken(client, id, token, now);
  return id;
}

export async function addToken(sourceId: string, token: StoredToken, now = Date.now()): Promise<string> {
  return insertToken(pool(), sourceId, token, now);
}

export async function revokeToken(tokenId: string, now = Date.now()): Promise<boolean> {
  return (await pool().query(REVOKE_TOKEN, [now, tokenId])).rowCount === 1;
}

export async function updateSourceSettings(id: string, settings: SourceSettings): Promise<void> {
  const sets: string[] = [];
  const values: unknown[] = [];
  const set = (column: string, value: unknown) => {
    values.push(value);
    sets.push(`"${column}" = $${values.length}`);
  };
  if (settings.policy !== undefined) set("policy", settings.policy);
  if (settings.capacityRecovery !== undefined) set("capacityRecovery", settings.capacityRecovery);
  if (settings.resumeAtReset !== undefined) set("resumeAtReset", settings.resumeAtReset);
  if (settings.incidents !== undefined) {
    set("incidentMinThreads", settings.incidents.incidentMinThreads);
    set("incidentWindowMs", settings.incidents.incidentWindowMs);
  }
  if (sets.length === 0) return;
  values.push(id);
  await pool().query(`UPDATE "Source" SET ${sets.join(", ")} WHERE id = $${values.length}`, values);
}

export async function recordPoll(sourceId: string, capabilities: string | undefined, at: number): Promise<void> {
  if (capabilities === undefined) await pool().query(POLLED, [at, sourceId]);
  else await pool().query(POLLED_ANNOUNCING, [at, capabilities, sourceId]);
}

/**
 * The highest event id below which every id drawn is committed or rolled back, or null when the
 * transactions drawing them are still running after a short wait (the next count tries again).
 *
 * Ids are drawn from the sequence before their transaction commits, on any instance, so a lower
 * id can commit after a higher one was counted; counting by id range past it would never count
 * it, and retention would later subtract nothing for it. A transaction holds its lock on the
 * sequence from its first draw until it ends, so once every transaction that held one after the
 * sequence's value was read has ended, every id up to that value is final.
 */
async function settledEventId(): Promise<number | null> {
  const drawn = (await pool().query<{ drawn: number }>(DRAWN_THROUGH)).rows[0].drawn;
  const drawing = (await pool().query<{ v: string }>(DRAWING)).rows.map((row) => row.v);
  for (let tries = 0; drawing.length > 0; tries++) {
    if ((await pool().query(STILL_DRAWING, [drawing])).rowCount === 0) break;
    if (tries === SETTLE_TRIES) return null;
    await new Promise((resolve) => setTimeout(resolve, SETTLE_PAUSE_MS));
  }
  return drawn;
}

export async function countNewEvents(limit: number): Promise<boolean> {
  const settled = await settledEventId();
  if (settled === null) return false;
  return inTransaction(async (client) => {
    await client.query(TALLY);
    const from = (await client.query<{ countedThrough: number }>(COUNTED_THROUGH)).rows[0].countedThrough;
    const last = (await client.query<{ last: number }>(LAST_EVENT_ID, [settled])).rows[0].last;
    if (last <= from) return false;
    const to = Math.min(last, from + limit);
    await client.query(COUNT_RANGE, [from, to]);
    await client.query(SET_COUNTED_THROUGH, [to]);
    return to < last;
  });
}

/* lib/db/sources.ts's reads outside a unit of work, on PostgreSQL: rows in the SQLite module's shape, booleans as booleans. */

const SOURCE_COLUMNS = `s.id, s.name, s.policy, s."capacityRecovery", s."resumeAtReset", s."incidentMinThreads", s."incidentWindowMs"`;
const FIRST_SOURCE = `SELECT ${SOURCE_COLUMNS} FROM "Source" s ORDER BY s."createdAt" LIMIT 1`;
const TOKEN_BY_HASH = `SELECT "revokedAt" FROM "IngestToken" WHERE "tokenHash" = $1`;
const SOURCE_BY_TOKEN_HASH = `SELECT ${SOURCE_COLUMNS} FROM "IngestToken" t JOIN "Source" s ON s.id = t."sourceId" WHERE t."tokenHash" = $1 AND t."revokedAt" IS NULL`;
const SOURCE_BY_ID = `SELECT ${SOURCE_COLUMNS} FROM "Source" s WHERE s.id = $1`;
const USAGE = `SELECT events, bytes FROM "SourceUsage" WHERE "sourceId" = $1`;

async function oneSource(text: string, params: unknown[]): Promise<SourceRecord | null> {
  return (await pool().query<SourceRecord>(text, params)).rows[0] ?? null;
}

export async function firstSource(): Promise<SourceRecord | null> {
  return oneSource(FIRST_SOURCE, []);
}

export async function tokenStatus(tokenHash: string): Promise<"unknown" | "active" | "revoked"> {
  return tokenStatusOf((await pool().query<{ revokedAt: Date | null }>(TOKEN_BY_HASH, [tokenHash])).rows[0]);
}

export async function sourceForTokenHash(tokenHash: string): Promise<SourceRecord | null> {
  return oneSource(SOURCE_BY_TOKEN_HASH, [tokenHash]);
}

export async function getSource(id: string): Promise<SourceRecord | null> {
  return oneSource(SOURCE_BY_ID, [id]);
}

export async function sourceUsage(sourceId: string): Promise<SourceUsage> {
  return (await pool().query<SourceUsage>(USAGE, [sourceId])).rows[0] ?? { events: 0, bytes: 0 };
}

const prisma = () => postgresPrisma() as unknown as DatabaseHandles["prisma"];

export async function threadControls(keys: number[]): Promise<Map<number, ThreadControl & { threadId: string }>> {
  return threadControlsThrough(prisma(), keys);
}

export async function listSourceOverviews(): Promise<SourceOverview[]> {
  return sourceOverviewsThrough(prisma());
}
