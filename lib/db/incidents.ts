import type { IncidentRecord } from "@/lib/retry";
import { STOPPABLE_STATUSES } from "@/lib/threads/statuses";
import type { IncidentDetail, IncidentList, IncidentStateFilter } from "@/lib/wire/types";
import { committedRead, db, serialized } from "./client";
import * as postgresReads from "./postgres/incidents-read";
import * as postgres from "./postgres/incidents";
import { keysOf, knownIncidentThreads, toIncidentDetail, toRecord, toView, type ActiveIncidentRow, type IncidentRow, type IncidentThreadRow, type StoredIncidentThreads } from "./records/incidents";
import { isoOrNull, pluck, statement, type Sql } from "./statement";
import { onEitherStore } from "./store";

/**
 * Incidents as the detector (lib/retry/incidents.ts) folds them: saved in the unit of work that
 * stored their notices (or the watchdog pass that closed them), read by the board, the incidents
 * pages, the API and the metrics. `forming` rows are the detector's groups below the threshold.
 */

/** The active incidents without their thread lists, read only where not known (KnownIncidentThreads). */
const ACTIVE = `SELECT id, state, kind, provider, model, sourceId, startedAt, lastNoticeAt, endedAt, closedBy, notices, resetAt, revision
  FROM "Incident" WHERE state IN ('forming', 'open')`;
const THREADS_OF = `SELECT id, revision, threads FROM "Incident" WHERE id IN (SELECT value FROM json_each(?))`;
const SAVE = `INSERT INTO "Incident" (id, state, kind, provider, model, sourceId, startedAt, lastNoticeAt, endedAt, closedBy, notices, resetAt, threadCount, threads, revision)
  VALUES (@id, @state, @kind, @provider, @model, @sourceId, @startedAt, @lastNoticeAt, @endedAt, @closedBy, @notices, @resetAt, @threadCount, @threads, @revision)
  ON CONFLICT (id) DO UPDATE SET state = excluded.state, startedAt = excluded.startedAt, lastNoticeAt = excluded.lastNoticeAt,
    endedAt = excluded.endedAt, closedBy = excluded.closedBy, notices = excluded.notices, resetAt = excluded.resetAt,
    threadCount = excluded.threadCount, threads = excluded.threads, revision = excluded.revision`;
const DELETE = `DELETE FROM "Incident" WHERE id = ?`;
const NOTE = `INSERT INTO "IncidentNote" (incidentId, at, actor, text) SELECT id, ?, ?, ? FROM "Incident" WHERE id = ? AND state != 'forming'`;
const NOTES = `SELECT at, actor, text FROM "IncidentNote" WHERE incidentId = ? ORDER BY at, id`;
const ACKNOWLEDGE = `UPDATE "Incident" SET acknowledgedBy = ?, acknowledgedAt = ? WHERE id = ? AND state = 'open'`;
const NEXT_QUIET_END = `SELECT min(lastNoticeAt) FROM "Incident" WHERE state = 'open'`;
const LIST = `SELECT i.*, s.name AS sourceName FROM "Incident" i LEFT JOIN "Source" s ON s.id = i.sourceId
  WHERE i.state IN (SELECT value FROM json_each(@states)) ORDER BY i.state = 'open' DESC, i.startedAt DESC LIMIT @limit`;
const ONE = `SELECT i.*, s.name AS sourceName FROM "Incident" i LEFT JOIN "Source" s ON s.id = i.sourceId WHERE i.id = ? AND i.state != 'forming'`;
const THREADS = `SELECT t.id AS key, t.externalId AS id, t.title, t.status, t.sourceId, s.name AS source FROM "Thread" t JOIN "Source" s ON s.id = t.sourceId
  WHERE t.id IN (SELECT value FROM json_each(?))`;
const STOPPABLE_KEYS = `SELECT id FROM "Thread" WHERE id IN (SELECT value FROM json_each(@keys)) AND status IN (SELECT value FROM json_each(@statuses)) ORDER BY id`;
const STOPPABLE = `SELECT count(*) FROM (${STOPPABLE_KEYS})`;
const TIMELINE = `SELECT (at / 60000) * 60000 AS minute, threadId AS thread, count(*) AS notices FROM "Event"
  WHERE type = 'retry' AND threadId IN (SELECT value FROM json_each(@keys)) AND at >= @from AND at <= @to
  GROUP BY minute, threadId ORDER BY minute, threadId`;
const EARLY = `SELECT count(*) FROM "Attempt" a JOIN "Episode" e ON e.id = a.episodeId
  WHERE e.threadId IN (SELECT value FROM json_each(@keys)) AND a.earlyByMs > 0 AND a.noticeAt >= @from AND a.noticeAt <= @to`;
/** Stoppable threads of many incidents at once (the board's banners): one query, not one per incident. */
const STOPPABLE_BY_INCIDENT = `SELECT i.id AS id, count(DISTINCT t.id) AS stoppable FROM "Incident" i, json_each(i.threads) j
  JOIN "Thread" t ON t.id = json_extract(j.value, '$.thread')
  WHERE i.id IN (SELECT value FROM json_each(@ids)) AND t.status IN (SELECT value FROM json_each(@statuses)) GROUP BY i.id`;
const OPEN_THREADS = `SELECT json_extract(j.value, '$.thread') AS key, i.id FROM "Incident" i, json_each(i.threads) j WHERE i.state = 'open'`;

/** The store statements of a unit of work (see unit-of-work.ts): incidents commit with their notices. */
export const incidentRows = {
  activeIncidents(): IncidentRecord[] {
    const rows = statement(ACTIVE).all() as ActiveIncidentRow[];
    const unknown = knownIncidentThreads.unknown(rows);
    if (unknown.length) knownIncidentThreads.read(statement(THREADS_OF).all(JSON.stringify(unknown)) as StoredIncidentThreads[]);
    return knownIncidentThreads.records(rows);
  },
  saveIncident(incident: IncidentRecord): void {
    const revision = knownIncidentThreads.save(incident);
    statement(SAVE).run({ ...incident, threadCount: incident.threads.length, threads: JSON.stringify(incident.threads), revision });
  },
  deleteIncident(id: string): void {
    statement(DELETE).run(id);
    knownIncidentThreads.forget(id);
  },
};

/** When the watchdog must look again: the earliest moment an open incident may close for quiet. */
function nextIncidentQuietEndOnSqlite(quietMs: number): Promise<number | null> {
  return serialized(() => {
    const last = pluck(NEXT_QUIET_END).get() as number | null;
    return last == null ? null : last + quietMs;
  });
}

/**
 * Open incidents first, then past ones, newest first. Synchronous, so the read worker (reads.ts)
 * runs it whole beside the board it goes with.
 */
export function readIncidents(state: IncidentStateFilter = "all", now = Date.now(), limit = 200, sql: Sql = db().sql): IncidentList {
  const states = state === "all" ? ["open", "closed"] : [state];
  const rows = statement(LIST, sql).all({ states: JSON.stringify(states), limit }) as IncidentRow[];
  const open = rows.filter((row) => row.state === "open").map((row) => row.id);
  const stoppable = new Map(
    open.length === 0
      ? []
      : (statement(STOPPABLE_BY_INCIDENT, sql).all({ ids: JSON.stringify(open), statuses: JSON.stringify(STOPPABLE_STATUSES) }) as { id: string; stoppable: number }[]).map((r) => [r.id, r.stoppable]),
  );
  return { incidents: rows.map((row) => toView(row, now, stoppable.get(row.id) ?? 0)), serverTime: new Date(now).toISOString() };
}

function listIncidentsOnSqlite(state: IncidentStateFilter = "all", now = Date.now(), limit = 200): Promise<IncidentList> {
  return committedRead((sql) => readIncidents(state, now, limit, sql));
}

/** One incident with its threads, timeline and early retries; null when unknown. */
function incidentDetailOnSqlite(id: string, now = Date.now()): Promise<IncidentDetail | null> {
  return committedRead((sql) => {
    const row = statement(ONE, sql).get(id) as IncidentRow | undefined;
    if (!row) return null;
    const record = toRecord(row);
    const keys = keysOf(record);
    const span = { keys, from: record.startedAt, to: record.endedAt ?? now };
    return toIncidentDetail(row, now, {
      stoppable: row.state === "open" ? (pluck(STOPPABLE, sql).get({ keys, statuses: JSON.stringify(STOPPABLE_STATUSES) }) as number) : 0,
      threads: statement(THREADS, sql).all(keys) as IncidentThreadRow[],
      timeline: statement(TIMELINE, sql).all(span) as { minute: number; thread: number; notices: number }[],
      earlyRetries: pluck(EARLY, sql).get(span) as number,
      notes: statement(NOTES, sql).all(id) as { at: number; actor: string; text: string }[],
    });
  });
}

/** Thread keys in an open incident, with the incident's id (the board's marker). */
function openIncidentThreadsOnSqlite(): Promise<Map<number, string>> {
  return committedRead((sql) => new Map((statement(OPEN_THREADS, sql).all() as { key: number; id: string }[]).map((r) => [r.key, r.id])));
}

/** The threads of one open incident that Stop all in this incident would stop; null when it is not open. */
function stoppableIncidentThreadKeysOnSqlite(id: string): Promise<number[] | null> {
  return serialized(() => {
    const row = statement(ONE).get(id) as IncidentRow | undefined;
    if (!row || row.state !== "open") return null;
    return pluck(STOPPABLE_KEYS).all({ keys: keysOf(toRecord(row)), statuses: JSON.stringify(STOPPABLE_STATUSES) }) as number[];
  });
}

/** The operator writes of incidents. */
const sqlite = {
  /** An operator says they are on an open incident; false when it is not open. */
  acknowledgeIncident(id: string, actor: string, now: number): Promise<boolean> {
    return serialized(() => statement(ACKNOWLEDGE).run(actor, now, id).changes > 0);
  },

  /** Adds an operator's note to an incident's timeline; false when there is no such incident. */
  annotateIncident(id: string, actor: string, text: string, now: number): Promise<boolean> {
    return serialized(() => statement(NOTE).run(now, actor, text, id).changes > 0);
  },
};

export const { acknowledgeIncident, annotateIncident } = onEitherStore(sqlite, postgres);

export const { nextIncidentQuietEnd, listIncidents, incidentDetail, openIncidentThreads, stoppableIncidentThreadKeys } = onEitherStore(
  {
    nextIncidentQuietEnd: nextIncidentQuietEndOnSqlite,
    listIncidents: listIncidentsOnSqlite,
    incidentDetail: incidentDetailOnSqlite,
    openIncidentThreads: openIncidentThreadsOnSqlite,
    stoppableIncidentThreadKeys: stoppableIncidentThreadKeysOnSqlite,
  },
  postgresReads,
);
