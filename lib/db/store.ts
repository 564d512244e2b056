import crypto from "node:crypto";
import type { DirectiveIntent, EpisodeRecord, RadarEvent, ThreadSettings, ThreadState } from "@/lib/retry";
import { db } from "./client";

/**
 * The write side of ingestion and of the watchdog: every statement the data path needs,
 * prepared once. All calls are synchronous (better-sqlite3) and are meant to run inside
 * `transaction`, so an ingest batch, its thread projections and its directives commit together.
 */

export function transaction<T>(fn: () => T): T {
  return db().sql.transaction(fn)();
}

type Statements = ReturnType<typeof prepare>;
const cache = new WeakMap<object, Statements>();

function statements(): Statements {
  const { sql } = db();
  let prepared = cache.get(sql);
  if (!prepared) {
    prepared = prepare(sql);
    cache.set(sql, prepared);
  }
  return prepared;
}

function prepare(sql: ReturnType<typeof db>["sql"]) {
  return {
    // A key is either an event's own (unique index) or one folded into a progress row (IngestKey).
    keyExists: sql
      .prepare(
        `SELECT 1 FROM "Event" WHERE sourceId = @sourceId AND idempotencyKey = @key
         UNION ALL SELECT 1 FROM "IngestKey" WHERE sourceId = @sourceId AND key = @key LIMIT 1`,
      )
      .pluck(),
    insertKey: sql.prepare(`INSERT INTO "IngestKey" (sourceId, key, eventId) VALUES (?, ?, ?)`),
    findThread: sql.prepare(
      `SELECT id, externalId, state, initialSettings, openProgressEventId FROM "Thread" WHERE sourceId = ? AND externalId = ?`,
    ),
    threadById: sql.prepare(`SELECT id, sourceId, externalId, state, initialSettings, openProgressEventId FROM "Thread" WHERE id = ?`),
    insertThread: sql.prepare(
      `INSERT INTO "Thread" (sourceId, externalId, status, state, initialSettings, createdAt, updatedAt) VALUES (?, ?, 'idle', ?, ?, ?, ?)`,
    ),
    insertEvent: sql.prepare(
      `INSERT INTO "Event" (sourceId, threadId, idempotencyKey, format, nativeType, type, at, receivedAt, lastAt, count,
        turnId, attempt, maxAttempts, delayMs, kind, httpStatus, code, message, late, raw, normalized)
       VALUES (@sourceId, @threadId, @idempotencyKey, @format, @nativeType, @type, @at, @receivedAt, @lastAt, @count,
        @turnId, @attempt, @maxAttempts, @delayMs, @kind, @httpStatus, @code, @message, 0, @raw, @normalized)`,
    ),
    foldProgress: sql.prepare(
      `UPDATE "Event" SET count = count + ?, lastAt = max(coalesce(lastAt, at), ?), normalized = ? WHERE id = ?`,
    ),
    eventNormalized: sql.prepare(`SELECT normalized FROM "Event" WHERE id = ?`).pluck(),
    markLate: sql.prepare(`UPDATE "Event" SET late = ? WHERE id = ?`),
    threadEvents: sql.prepare(`SELECT id, normalized FROM "Event" WHERE threadId = ? ORDER BY at, id`),
    saveThread: sql.prepare(
      `UPDATE "Thread" SET parentExternalId = @parentExternalId, title = @title, agent = @agent, provider = @provider,
        model = @model, policy = @policy, status = @status, turnId = @turnId, retryKind = @retryKind,
        retryAttempt = @retryAttempt, retryMaxAttempts = @retryMaxAttempts, nextAttemptAt = @nextAttemptAt,
        nextAttemptEstimated = @nextAttemptEstimated, deadlineAt = @deadlineAt, resetAt = @resetAt,
        advisedDelayMs = @advisedDelayMs, lastErrorKind = @lastErrorKind, lastErrorHttpStatus = @lastErrorHttpStatus,
        lastErrorCode = @lastErrorCode, lastErrorMessage = @lastErrorMessage, wakeAt = @wakeAt, state = @state,
        lastEventAt = @lastEventAt, openProgressEventId = @openProgressEventId, updatedAt = @updatedAt
       WHERE id = @id`,
    ),
    upsertEpisode: sql.prepare(
      `INSERT INTO "Episode" (threadId, seq, turnId, kind, policy, maxAttempts, startedAt, endedAt, outcome, outcomeCode,
        outcomeReason, resetAt)
       VALUES (@threadId, @seq, @turnId, @kind, @policy, @maxAttempts, @startedAt, @endedAt, @outcome, @outcomeCode,
        @outcomeReason, @resetAt)
       ON CONFLICT (threadId, seq) DO UPDATE SET turnId = excluded.turnId, kind = excluded.kind, policy = excluded.policy,
        maxAttempts = excluded.maxAttempts, startedAt = excluded.startedAt, endedAt = excluded.endedAt,
        outcome = excluded.outcome, outcomeCode = excluded.outcomeCode, outcomeReason = excluded.outcomeReason,
        resetAt = excluded.resetAt
       RETURNING id`,
    ),
    upsertAttempt: sql.prepare(
      `INSERT INTO "Attempt" (episodeId, n, noticeAt, advisedDelayMs, expectedAt, estimated, deadlineAt, startedAt,
        earlyByMs, httpStatus, code, message)
       VALUES (@episodeId, @n, @noticeAt, @advisedDelayMs, @expectedAt, @estimated, @deadlineAt, @startedAt,
        @earlyByMs, @httpStatus, @code, @message)
       ON CONFLICT (episodeId, n) DO UPDATE SET noticeAt = excluded.noticeAt, advisedDelayMs = excluded.advisedDelayMs,
        expectedAt = excluded.expectedAt, estimated = excluded.estimated, deadlineAt = excluded.deadlineAt,
        startedAt = excluded.startedAt, earlyByMs = excluded.earlyByMs, httpStatus = excluded.httpStatus,
        code = excluded.code, message = excluded.message`,
    ),
    deleteEpisodes: sql.prepare(`DELETE FROM "Episode" WHERE threadId = ?`),
    upsertTurn: sql.prepare(
      `INSERT INTO "Turn" (threadId, externalId, status, startedAt, endedAt) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (threadId, externalId) DO UPDATE SET status = excluded.status, endedAt = excluded.endedAt`,
    ),
    insertDirective: sql.prepare(
      `INSERT OR IGNORE INTO "Directive" (id, sourceId, threadId, dedupeKey, turnId, kind, origin, reason, state, createdAt)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)`,
    ),
    children: sql.prepare(`SELECT id FROM "Thread" WHERE sourceId = ? AND parentExternalId = ?`).pluck(),
    dueThreads: sql.prepare(`SELECT id FROM "Thread" WHERE wakeAt IS NOT NULL AND wakeAt <= ? ORDER BY wakeAt LIMIT ?`).pluck(),
    nextWake: sql.prepare(`SELECT min(wakeAt) FROM "Thread" WHERE wakeAt IS NOT NULL`).pluck(),
    touchSource: sql.prepare(`UPDATE "Source" SET lastSeenAt = max(coalesce(lastSeenAt, 0), ?) WHERE id = ?`),
  };
}

export interface StoredThread {
  id: number;
  externalId: string;
  state: ThreadState;
  /** What a replay starts from: the settings the thread was created with. */
  initialSettings: ThreadSettings;
  openProgressEventId: number | null;
}

interface ThreadRow {
  id: number;
  externalId: string;
  state: string;
  initialSettings: string | null;
  openProgressEventId: number | null;
}

const toStored = (row: ThreadRow): StoredThread => {
  const state = JSON.parse(row.state) as ThreadState;
  return {
    id: row.id,
    externalId: row.externalId,
    state,
    initialSettings: row.initialSettings ? (JSON.parse(row.initialSettings) as ThreadSettings) : state.settings,
    openProgressEventId: row.openProgressEventId,
  };
};

export function isDuplicateKey(sourceId: string, key: string): boolean {
  return statements().keyExists.get({ sourceId, key }) !== undefined;
}

export function findThread(sourceId: string, externalId: string): StoredThread | null {
  const row = statements().findThread.get(sourceId, externalId) as ThreadRow | undefined;
  return row ? toStored(row) : null;
}

export function threadById(id: number): (StoredThread & { sourceId: string }) | null {
  const row = statements().threadById.get(id) as (ThreadRow & { sourceId: string }) | undefined;
  return row ? { ...toStored(row), sourceId: row.sourceId } : null;
}

export function createThread(sourceId: string, externalId: string, state: ThreadState, now: number): StoredThread {
  const info = statements().insertThread.run(sourceId, externalId, JSON.stringify(state), JSON.stringify(state.settings), now, now);
  return { id: Number(info.lastInsertRowid), externalId, state, initialSettings: state.settings, openProgressEventId: null };
}

export interface EventRow {
  sourceId: string;
  threadId: number | null;
  idempotencyKey: string;
  format: string;
  nativeType: string | null;
  event: Omit<RadarEvent, "seq">;
  kind: string | null;
  receivedAt: number;
  raw: unknown;
}

/** Stores one accepted line (its key is unique per source); returns the event id, which is its sequence. */
export function insertEvent(row: EventRow): number {
  const { event } = row;
  const s = statements();
  const info = s.insertEvent.run({
    sourceId: row.sourceId,
    threadId: row.threadId,
    idempotencyKey: row.idempotencyKey,
    format: row.format,
    nativeType: row.nativeType,
    type: event.type,
    at: event.at,
    receivedAt: row.receivedAt,
    lastAt: event.lastAt ?? null,
    count: event.progressCount ?? 1,
    turnId: event.turnId ?? null,
    attempt: event.attempt ?? null,
    maxAttempts: event.maxAttempts ?? null,
    delayMs: event.delayMs == null ? null : Math.round(event.delayMs),
    kind: row.kind,
    httpStatus: event.error?.httpStatus ?? null,
    code: codeText(event.error?.code),
    message: event.error?.message ?? event.reason ?? null,
    raw: JSON.stringify(row.raw ?? null),
    normalized: JSON.stringify(event),
  });
  return Number(info.lastInsertRowid);
}

function codeText(code: unknown): string | null {
  if (code == null) return null;
  return typeof code === "string" ? code : JSON.stringify(code);
}

/**
 * Progress deltas arrive by the hundred; they are folded into the open progress row of the
 * thread (count and last time) instead of flooding the event table. The key is still recorded.
 */
export function foldProgress(sourceId: string, eventId: number, key: string, count: number, at: number): void {
  const s = statements();
  const normalized = JSON.parse(s.eventNormalized.get(eventId) as string) as Omit<RadarEvent, "seq">;
  normalized.progressCount = (normalized.progressCount ?? 1) + count;
  normalized.lastAt = Math.max(normalized.lastAt ?? normalized.at, at);
  s.foldProgress.run(count, at, JSON.stringify(normalized), eventId);
  s.insertKey.run(sourceId, key, eventId);
}

export function markLate(eventId: number, late: boolean): void {
  statements().markLate.run(late ? 1 : 0, eventId);
}

/** A thread's events in reducer order (event time, then sequence), for replays. */
export function threadEvents(threadId: number): RadarEvent[] {
  return (statements().threadEvents.all(threadId) as { id: number; normalized: string }[]).map((row) => ({
    ...(JSON.parse(row.normalized) as Omit<RadarEvent, "seq">),
    seq: row.id,
  }));
}

export function saveThread(thread: StoredThread, now: number): void {
  const { state } = thread;
  statements().saveThread.run({
    id: thread.id,
    parentExternalId: state.parentThreadId ?? null,
    title: state.title ?? null,
    agent: state.agent ?? null,
    provider: state.provider ?? null,
    model: state.model ?? null,
    policy: state.retry?.policy ?? state.episode?.policy ?? null,
    status: state.status,
    turnId: state.turnId ?? null,
    retryKind: state.retry?.kind ?? null,
    retryAttempt: state.retry?.attempt ?? null,
    retryMaxAttempts: state.retry?.maxAttempts ?? null,
    nextAttemptAt: state.retry?.nextAttemptAt ?? null,
    nextAttemptEstimated: state.retry?.nextAttemptEstimated ? 1 : 0,
    deadlineAt: state.retry?.deadlineAt ?? null,
    resetAt: state.retry?.resetAt ?? state.episode?.resetAt ?? null,
    advisedDelayMs: state.retry?.advisedDelayMs == null ? null : Math.round(state.retry.advisedDelayMs),
    lastErrorKind: state.lastError?.kind ?? null,
    lastErrorHttpStatus: state.lastError?.httpStatus ?? null,
    lastErrorCode: state.lastError?.code ?? null,
    lastErrorMessage: state.lastError?.message ?? null,
    wakeAt: state.wakeAt ?? null,
    state: JSON.stringify(state),
    lastEventAt: state.lastEventAt ?? null,
    openProgressEventId: thread.openProgressEventId,
    updatedAt: now,
  });
}

export function saveEpisode(threadId: number, episode: EpisodeRecord): void {
  const s = statements();
  const { id: episodeId } = s.upsertEpisode.get({
    threadId,
    seq: episode.seq,
    turnId: episode.turnId ?? null,
    kind: episode.kind,
    policy: episode.policy,
    maxAttempts: episode.maxAttempts ?? null,
    startedAt: episode.startedAt,
    endedAt: episode.endedAt ?? null,
    outcome: episode.outcome ?? null,
    outcomeCode: episode.outcomeCode ?? null,
    outcomeReason: episode.outcomeReason ?? null,
    resetAt: episode.resetAt ?? null,
  }) as { id: number };
  for (const attempt of episode.attempts) {
    s.upsertAttempt.run({
      episodeId,
      n: attempt.n,
      noticeAt: attempt.noticeAt,
      advisedDelayMs: attempt.advisedDelayMs == null ? null : Math.round(attempt.advisedDelayMs),
      expectedAt: attempt.expectedAt ?? null,
      estimated: attempt.estimated ? 1 : 0,
      deadlineAt: attempt.deadlineAt ?? null,
      startedAt: attempt.startedAt ?? null,
      earlyByMs: attempt.earlyByMs == null ? null : Math.round(attempt.earlyByMs),
      httpStatus: attempt.httpStatus ?? null,
      code: codeText(attempt.code),
      message: attempt.message ?? null,
    });
  }
}

/** Before a replay, the derived episode rows of a thread are rebuilt from its events. */
export function deleteEpisodes(threadId: number): void {
  statements().deleteEpisodes.run(threadId);
}

export function saveTurn(threadId: number, turnId: string, status: string, startedAt: number, endedAt: number | null): void {
  statements().upsertTurn.run(threadId, turnId, status, startedAt, endedAt);
}

/** Inserts a directive unless one with the same engine key exists; returns its id when new. */
export function insertDirective(sourceId: string, threadId: number, intent: DirectiveIntent, now: number): string | null {
  const id = crypto.randomUUID();
  const info = statements().insertDirective.run(
    id,
    sourceId,
    threadId,
    intent.key,
    intent.turnId ?? null,
    intent.kind,
    intent.origin,
    intent.reason,
    now,
  );
  return info.changes === 1 ? id : null;
}

/** Threads whose stored parent is this one (the caller checks their current state). */
export function childThreadIds(sourceId: string, parentExternalId: string): number[] {
  return statements().children.all(sourceId, parentExternalId) as number[];
}

export function dueThreadIds(now: number, limit = 200): number[] {
  return statements().dueThreads.all(now, limit) as number[];
}

export function nextWakeAt(): number | null {
  return (statements().nextWake.get() as number | null) ?? null;
}

export function touchSource(sourceId: string, at: number): void {
  statements().touchSource.run(at, sourceId);
}

export function threadIdsOfSource(sourceId: string): number[] {
  return db().sql.prepare(`SELECT id FROM "Thread" WHERE sourceId = ?`).pluck().all(sourceId) as number[];
}
