import { STOPPABLE_STATUSES } from "@/lib/threads/statuses";
import type { IncidentDetail, IncidentList, IncidentStateFilter } from "@/lib/wire/types";
import { toIncidentDetail, toRecord, toView, type IncidentRow, type IncidentThreadRow } from "../records/incidents";
import { at, ms, rowsOf, snapshotRead } from "./sql";
import { msFromTimestamp } from "./time";

/** The reads of lib/db/incidents.ts on PostgreSQL (saving, acknowledging and annotating are the write path's). */

const INCIDENT_COLUMNS = `i.id, i.state, i.kind, i.provider, i.model, i."sourceId", ${ms(`i."startedAt"`)}, ${ms(`i."lastNoticeAt"`)}, ${ms(`i."endedAt"`)},
  i."closedBy", i.notices, ${ms(`i."resetAt"`)}, i."threadCount", i.threads, i."acknowledgedBy", ${ms(`i."acknowledgedAt"`)}, ${ms(`i."silencedUntil"`)}`;
const LIST = `SELECT ${INCIDENT_COLUMNS}, s.name AS "sourceName" FROM "Incident" i LEFT JOIN "Source" s ON s.id = i."sourceId"
  WHERE i.state = ANY(?::text[]) ORDER BY (i.state = 'open') DESC, i."startedAt" DESC LIMIT ?`;
const ONE = `SELECT ${INCIDENT_COLUMNS}, s.name AS "sourceName" FROM "Incident" i LEFT JOIN "Source" s ON s.id = i."sourceId" WHERE i.id = ? AND i.state != 'forming'`;
/** The thread keys of incident alias `i` (its `threads` JSON), as rows `j(key)`. */
const THREAD_KEYS = `LATERAL (SELECT (value ->> 'thread')::int AS key, n FROM jsonb_array_elements(i.threads::jsonb) WITH ORDINALITY AS e(value, n)) j`;
const THREADS = `SELECT t.id AS key, t."externalId" AS id, t.title, t.status, t."sourceId", s.name AS source FROM "Thread" t JOIN "Source" s ON s.id = t."sourceId"
  WHERE t.id = ANY(?::int[])`;
const STOPPABLE_KEYS = `SELECT id FROM "Thread" WHERE id = ANY(?::int[]) AND status = ANY(?::text[]) ORDER BY id`;
const TIMELINE = `SELECT (${msFromTimestamp("at")} / 60000) * 60000 AS minute, "threadId" AS thread, count(*) AS notices FROM "Event"
  WHERE type = 'retry' AND "threadId" = ANY(?::int[]) AND at >= ${at()} AND at <= ${at()}
  GROUP BY 1, 2 ORDER BY 1, 2`;
const EARLY = `SELECT count(*) AS n FROM "Attempt" a JOIN "Episode" e ON e.id = a."episodeId"
  WHERE e."threadId" = ANY(?::int[]) AND a."earlyByMs" > 0 AND a."noticeAt" >= ${at()} AND a."noticeAt" <= ${at()}`;
const STOPPABLE_BY_INCIDENT = `SELECT i.id, count(DISTINCT t.id) AS stoppable FROM "Incident" i CROSS JOIN ${THREAD_KEYS}
  JOIN "Thread" t ON t.id = j.key WHERE i.id = ANY(?::text[]) AND t.status = ANY(?::text[]) GROUP BY i.id`;
// A thread in two open incidents is marked with the later one, as SQLite's row order gives it.
const OPEN_THREADS = `SELECT j.key, i.id FROM "Incident" i CROSS JOIN ${THREAD_KEYS} WHERE i.state = 'open' ORDER BY i."startedAt", i.id, j.n`;
const NOTES = `SELECT ${ms("at")}, actor, text FROM "IncidentNote" WHERE "incidentId" = ? ORDER BY "IncidentNote".at, id`;

const threadKeys = (row: IncidentRow) => toRecord(row).threads.map((t) => t.thread);

export async function nextIncidentQuietEnd(quietMs: number): Promise<number | null> {
  const [{ last }] = await rowsOf<{ last: number | null }>(`SELECT ${msFromTimestamp(`min("lastNoticeAt")`)} AS last FROM "Incident" WHERE state = 'open'`, []);
  return last == null ? null : last + quietMs;
}

export function listIncidents(state: IncidentStateFilter = "all", now = Date.now(), limit = 200): Promise<IncidentList> {
  const states = state === "all" ? ["open", "closed"] : [state];
  return snapshotRead(async (db) => {
    const rows = await rowsOf<IncidentRow>(LIST, [states, limit], db);
    const open = rows.filter((row) => row.state === "open").map((row) => row.id);
    const stoppable = new Map(
      open.length === 0 ? [] : (await rowsOf<{ id: string; stoppable: number }>(STOPPABLE_BY_INCIDENT, [open, STOPPABLE_STATUSES], db)).map((r) => [r.id, r.stoppable]),
    );
    return { incidents: rows.map((row) => toView(row, now, stoppable.get(row.id) ?? 0)), serverTime: new Date(now).toISOString() };
  });
}

export function incidentDetail(id: string, now = Date.now()): Promise<IncidentDetail | null> {
  return snapshotRead(async (db) => {
    const [row] = await rowsOf<IncidentRow>(ONE, [id], db);
    if (!row) return null;
    const record = toRecord(row);
    const keys = threadKeys(row);
    const span = [keys, record.startedAt, record.endedAt ?? now];
    return toIncidentDetail(row, now, {
      stoppable: row.state === "open" ? (await rowsOf(STOPPABLE_KEYS, [keys, STOPPABLE_STATUSES], db)).length : 0,
      threads: await rowsOf<IncidentThreadRow>(THREADS, [keys], db),
      timeline: await rowsOf<{ minute: number; thread: number; notices: number }>(TIMELINE, span, db),
      earlyRetries: (await rowsOf<{ n: number }>(EARLY, span, db))[0].n,
      notes: await rowsOf<{ at: number; actor: string; text: string }>(NOTES, [id], db),
    });
  });
}

export async function openIncidentThreads(): Promise<Map<number, string>> {
  return new Map((await rowsOf<{ key: number; id: string }>(OPEN_THREADS, [])).map((r) => [r.key, r.id]));
}

export async function stoppableIncidentThreadKeys(id: string): Promise<number[] | null> {
  const [row] = await rowsOf<IncidentRow>(ONE, [id]);
  if (!row || row.state !== "open") return null;
  return (await rowsOf<{ id: number }>(STOPPABLE_KEYS, [threadKeys(row), STOPPABLE_STATUSES])).map((r) => r.id);
}
