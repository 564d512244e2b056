import type { IncidentSettingsBySource } from "@/lib/retry";
import type { SourceOverview } from "@/lib/wire/types";
import { engineReach, type EngineReach, type SourceReach, type ThreadControl } from "@/lib/threads/control";
import { committedRead, db, serialized, writeTransaction } from "./client";
import {
  incidentSettingsOf, newSource, sourceOverviewsThrough, threadControlsThrough, tokenStatusOf,
  type IncidentThresholds, type SourceRecord, type SourceSettings, type SourceUsage, type StoredToken,
} from "./records/sources";
import * as postgres from "./postgres/sources";
import { pluck, statement, type Sql } from "./statement";
import { onEitherStore } from "./store";

export type { IncidentThresholds, SourceRecord, SourceSettings, SourceUsage, StoredToken } from "./records/sources";

/**
 * Sources and their ingest tokens. Tokens are stored as their hash only: hashing and generating
 * them is the server's (lib/server/tokens.ts); here hashes are stored and found.
 */

interface SourceRow {
  id: string;
  name: string;
  policy: string | null;
  capacityRecovery: number;
  resumeAtReset: number;
  incidentMinThreads: number | null;
  incidentWindowMs: number | null;
}

const SOURCE_COLUMNS = `id, name, policy, capacityRecovery, resumeAtReset, incidentMinThreads, incidentWindowMs`;
const INSERT_SOURCE = `INSERT INTO "Source" (id, name, createdAt, capacityRecovery) VALUES (?, ?, ?, 0)`;
const INSERT_TOKEN = `INSERT INTO "IngestToken" (id, sourceId, tokenHash, prefix, label, createdAt) VALUES (?, ?, ?, ?, ?, ?)`;
const REVOKE_TOKEN = `UPDATE "IngestToken" SET revokedAt = ? WHERE id = ? AND revokedAt IS NULL`;
const FIRST_SOURCE = `SELECT ${SOURCE_COLUMNS} FROM "Source" ORDER BY createdAt LIMIT 1`;
const TOKEN_BY_HASH = `SELECT revokedAt FROM "IngestToken" WHERE tokenHash = ?`;
const SOURCE_BY_TOKEN_HASH = `SELECT s.id, s.name, s.policy, s.capacityRecovery, s.resumeAtReset, s.incidentMinThreads, s.incidentWindowMs FROM "IngestToken" t JOIN "Source" s ON s.id = t.sourceId
  WHERE t.tokenHash = ? AND t.revokedAt IS NULL`;
const SOURCE_BY_ID = `SELECT ${SOURCE_COLUMNS} FROM "Source" WHERE id = ?`;
const SET_POLICY = `UPDATE "Source" SET policy = ? WHERE id = ?`;
const SET_CAPACITY_RECOVERY = `UPDATE "Source" SET capacityRecovery = ? WHERE id = ?`;
const SET_RESUME_AT_RESET = `UPDATE "Source" SET resumeAtReset = ? WHERE id = ?`;
const SET_INCIDENT_THRESHOLDS = `UPDATE "Source" SET incidentMinThreads = ?, incidentWindowMs = ? WHERE id = ?`;
const INCIDENT_THRESHOLDS = `SELECT id, incidentMinThreads, incidentWindowMs FROM "Source" WHERE incidentMinThreads IS NOT NULL OR incidentWindowMs IS NOT NULL`;
const REACH = `SELECT capabilities, lastPolledAt, lastOtlpAt FROM "Source" WHERE id = ?`;
const USAGE = `SELECT events, bytes FROM "SourceUsage" WHERE sourceId = ?`;
const COUNTED_THROUGH = `SELECT countedThrough FROM "UsageTally" WHERE id = 1`;
const LAST_EVENT_ID = `SELECT coalesce(max(id), 0) FROM "Event"`;
const COUNT_RANGE = `INSERT INTO "SourceUsage" (sourceId, events, bytes)
  SELECT sourceId, count(*), sum(octet_length(raw) + octet_length(normalized)) FROM "Event" WHERE id > @from AND id <= @to GROUP BY sourceId
  ON CONFLICT (sourceId) DO UPDATE SET events = events + excluded.events, bytes = bytes + excluded.bytes`;
const SET_COUNTED_THROUGH = `UPDATE "UsageTally" SET countedThrough = ? WHERE id = 1`;
const USAGE_OF_EVENTS = `SELECT sourceId, count(*) AS events, sum(octet_length(raw) + octet_length(normalized)) AS bytes
  FROM "Event" WHERE id IN (SELECT value FROM json_each(?)) GROUP BY sourceId`;
const SUBTRACT_USAGE = `UPDATE "SourceUsage" SET events = max(0, events - ?), bytes = max(0, bytes - ?) WHERE sourceId = ?`;
const TOUCH = `UPDATE "Source" SET lastSeenAt = max(coalesce(lastSeenAt, 0), ?) WHERE id = ?`;
const POLLED = `UPDATE "Source" SET lastPolledAt = max(coalesce(lastPolledAt, 0), ?) WHERE id = ?`;
const POLLED_ANNOUNCING = `UPDATE "Source" SET lastPolledAt = max(coalesce(lastPolledAt, 0), ?), capabilities = ? WHERE id = ?`;
const TOUCH_OTLP = `UPDATE "Source" SET lastOtlpAt = max(coalesce(lastOtlpAt, 0), ?) WHERE id = ?`;

const toSource = (row: SourceRow): SourceRecord => ({ ...row, capacityRecovery: row.capacityRecovery === 1, resumeAtReset: row.resumeAtReset === 1 });

function insertToken(sourceId: string, token: StoredToken, now: number, sql: Sql = db().sql): string {
  const id = crypto.randomUUID();
  statement(INSERT_TOKEN, sql).run(id, sourceId, token.tokenHash, token.prefix, token.label, now);
  return id;
}

/** Sources outside a unit of work: their writes and reads. */
const sqlite = {
  /** A new source with its first token, in one transaction. */
  createSource(name: string, token: StoredToken, now = Date.now()): Promise<SourceRecord> {
    return serialized(() => newSource(insertSourceInto(db().sql, name, token, now), name));
  },

  /** Stores another token of a source; returns its id. */
  addToken(sourceId: string, token: StoredToken, now = Date.now()): Promise<string> {
    return serialized(() => insertToken(sourceId, token, now));
  },

  revokeToken(tokenId: string, now = Date.now()): Promise<boolean> {
    return serialized(() => statement(REVOKE_TOKEN).run(now, tokenId).changes === 1);
  },

  updateSourceSettings(id: string, settings: SourceSettings): Promise<void> {
    return serialized(() => {
      if (settings.policy !== undefined) statement(SET_POLICY).run(settings.policy, id);
      if (settings.capacityRecovery !== undefined) statement(SET_CAPACITY_RECOVERY).run(settings.capacityRecovery ? 1 : 0, id);
      if (settings.resumeAtReset !== undefined) statement(SET_RESUME_AT_RESET).run(settings.resumeAtReset ? 1 : 0, id);
      if (settings.incidents !== undefined) statement(SET_INCIDENT_THRESHOLDS).run(settings.incidents.incidentMinThreads, settings.incidents.incidentWindowMs, id);
    });
  },

  /**
   * Records a long-poll for directives and, when the relay announced it, what it can carry out
   * (lib/threads/control.ts). An older relay announces nothing: its last announcement stays.
   */
  recordPoll(sourceId: string, capabilities: string | undefined, at: number): Promise<void> {
    return serialized(() => {
      if (capabilities === undefined) statement(POLLED).run(at, sourceId);
      else statement(POLLED_ANNOUNCING).run(at, capabilities, sourceId);
    });
  },

  /**
   * Adds the events received since the last count to their sources' usage, at most `limit` ids in
   * one unit of work; returns whether more remain. Counting after the fact, by id range, keeps the
   * per-row cost off ingestion. A progress row that grows by folding after it was counted keeps
   * its counted size (a few bytes per fold).
   */
  countNewEvents(limit: number): Promise<boolean> {
    return writeTransaction(() => {
      const from = pluck(COUNTED_THROUGH).get() as number;
      const last = pluck(LAST_EVENT_ID).get() as number;
      if (last <= from) return false;
      const to = Math.min(last, from + limit);
      statement(COUNT_RANGE).run({ from, to });
      statement(SET_COUNTED_THROUGH).run(to);
      return to < last;
    });
  },

  /** The first source created (the one a configured token belongs to), or null on an empty database. */
  firstSource(): Promise<SourceRecord | null> {
    return serialized(() => {
      const row = statement(FIRST_SOURCE).get() as SourceRow | undefined;
      return row ? toSource(row) : null;
    });
  },

  /** Whether a token hash is known, and whether it was revoked. */
  tokenStatus(tokenHash: string): Promise<"unknown" | "active" | "revoked"> {
    return serialized(() => {
      const row = statement(TOKEN_BY_HASH).get(tokenHash) as { revokedAt: number | null } | undefined;
      return tokenStatusOf(row);
    });
  },

  /** The source a token hash belongs to, or null for an unknown or revoked token. */
  sourceForTokenHash(tokenHash: string): Promise<SourceRecord | null> {
    // Every ingestion request's authentication: committed rows only, beside the writer queue (as an API key's lookup).
    return committedRead((sql) => {
      const row = statement(SOURCE_BY_TOKEN_HASH, sql).get(tokenHash) as SourceRow | undefined;
      return row ? toSource(row) : null;
    });
  },

  getSource(id: string): Promise<SourceRecord | null> {
    return serialized(() => {
      const row = statement(SOURCE_BY_ID).get(id) as SourceRow | undefined;
      return row ? toSource(row) : null;
    });
  },

  /**
   * What a source stores, as last counted: one row, no scan of the events. Events received since
   * the last count (a few seconds; see countNewEvents) are not in it yet.
   */
  sourceUsage(sourceId: string): Promise<SourceUsage> {
    // Asked before every ingestion request: read beside the writer queue, never behind it.
    return committedRead((sql) => (statement(USAGE, sql).get(sourceId) as SourceUsage | undefined) ?? { events: 0, bytes: 0 });
  },

  /** What each thread's source can carry out, with the thread's own id, by thread key (missing threads are absent). */
  threadControls(keys: number[]): Promise<Map<number, ThreadControl & { threadId: string }>> {
    return threadControlsThrough(db().prisma, keys);
  },

  /** The Sources page: every source with its activity and its tokens (never the secrets). */
  listSourceOverviews(): Promise<SourceOverview[]> {
    return sourceOverviewsThrough(db().prisma);
  },
};

export const {
  createSource, addToken, revokeToken, updateSourceSettings, recordPoll, countNewEvents,
  firstSource, tokenStatus, sourceForTokenHash, getSource, sourceUsage, threadControls, listSourceOverviews,
} = onEitherStore(sqlite, postgres);

/** Inserts a source and its first token through a given connection (also a test harness seeding a server's database file); returns its id. */
export function insertSourceInto(sql: Sql, name: string, token: StoredToken, now: number): string {
  const id = crypto.randomUUID();
  sql.transaction(() => {
    statement(INSERT_SOURCE, sql).run(id, name, now);
    insertToken(id, token, now, sql);
  })();
  return id;
}

/** The events counted so far end at this id: retention deletes only those (inside its unit of work). */
export function countedThrough(): number {
  return pluck(COUNTED_THROUGH).get() as number;
}

/** Takes events about to be deleted out of their sources' usage (inside the deleting unit of work). */
export function subtractUsage(eventIdsJson: string): void {
  const rows = statement(USAGE_OF_EVENTS).all(eventIdsJson) as { sourceId: string; events: number; bytes: number }[];
  for (const row of rows) statement(SUBTRACT_USAGE).run(row.events, row.bytes, row.sourceId);
}

/** The source statements of a unit of work (see unit-of-work.ts); synchronous on SQLite. */
export const sourceRows = {
  touchSource(sourceId: string, at: number): void {
    statement(TOUCH).run(at, sourceId);
  },

  /** What the source can carry out on the engine's own initiative (lib/threads/control.ts). */
  sourceReach(sourceId: string): EngineReach {
    const row = statement(REACH).get(sourceId) as SourceReach | undefined;
    return engineReach(row ?? { capabilities: null, lastPolledAt: null, lastOtlpAt: null });
  },

  /** The incident thresholds of the sources that set their own (the detector's per-source settings). */
  sourceIncidentSettings(): IncidentSettingsBySource {
    const rows = statement(INCIDENT_THRESHOLDS).all() as ({ id: string } & IncidentThresholds)[];
    return incidentSettingsOf(rows);
  },

  /** Records that a source's OpenTelemetry export arrived (in the unit of work that stores its records). */
  touchOtlp(sourceId: string, at: number): void {
    statement(TOUCH_OTLP).run(at, sourceId);
  },
};

