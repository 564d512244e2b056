import { threadControl, type SourceReach } from "@/lib/threads/control";
import type { BlockingWindow, DirectiveHistory, EpisodeView, EventPage, EventView, ThreadDetail, ThreadView } from "@/lib/wire/types";
import { isStalledRow } from "../thread-filter";
import { parseState } from "./thread-state";

/**
 * A thread as both stores' readers answer it: the board's rows (ThreadView), and the thread page
 * (ThreadDetail) assembled from the rows each store reads its own way.
 */

/** What the thread readers read through Prisma with a thread: its source's name and reach. */
export const threadInclude = { source: { select: { name: true, capabilities: true, lastPolledAt: true, lastOtlpAt: true } } } as const;

/** A stored time as Prisma reads it (a Date) or as SQL does (epoch ms). */
export type Instant = Date | number | null;

/** The columns a ThreadView is made of, as Prisma (a thread with its source) or the board's SQL reads them. */
export interface ViewRow {
  id: number;
  externalId: string;
  title: string | null;
  agent: string | null;
  provider: string | null;
  model: string | null;
  sourceId: string;
  parentExternalId: string | null;
  status: string;
  turnId: string | null;
  retryKind: string | null;
  retryAttempt: number | null;
  retryMaxAttempts: number | null;
  nextAttemptAt: Instant;
  nextAttemptEstimated: boolean | number;
  deadlineAt: Instant;
  resetAt: Instant;
  advisedDelayMs: number | null;
  policy: string | null;
  lastErrorKind: string | null;
  lastErrorHttpStatus: number | null;
  lastErrorCode: string | null;
  lastErrorMessage: string | null;
  wakeAt: Instant;
  updatedAt: Date | number;
  lastEventAt: Instant;
  archivedAt: Instant;
  snoozedUntil: Instant;
  source: SourceReach & { name: string };
}

/** A ViewRow as the board's SQL reads it: the source's columns flat beside the thread's. */
export type SqlViewRow = Omit<ViewRow, "source"> & {
  sourceName: string;
  sourceCapabilities: string | null;
  sourceLastPolledAt: Instant;
  sourceLastOtlpAt: Instant;
};

const iso = (at: Instant) => (at === null ? null : new Date(at).toISOString());

export function toThreadView(row: ViewRow, now: number): ThreadView {
  const stalled = isStalledRow(row, now);
  return {
    id: row.externalId,
    key: row.id,
    title: row.title,
    agent: row.agent,
    provider: row.provider,
    model: row.model,
    source: row.source.name,
    sourceId: row.sourceId,
    parentThreadId: row.parentExternalId,
    status: stalled ? "stalled" : row.status,
    turnId: row.turnId,
    retry: row.retryKind
      ? {
          kind: row.retryKind,
          attempt: row.retryAttempt,
          maxAttempts: row.retryMaxAttempts,
          nextAttemptAt: iso(row.nextAttemptAt),
          nextAttemptEstimated: Boolean(row.nextAttemptEstimated),
          deadlineAt: iso(row.deadlineAt),
          resetAt: iso(row.resetAt),
          advisedDelayMs: row.advisedDelayMs,
          policy: row.policy,
        }
      : null,
    resetAt: iso(row.resetAt),
    lastError:
      row.lastErrorKind || row.lastErrorMessage || row.lastErrorCode
        ? { kind: row.lastErrorKind, httpStatus: row.lastErrorHttpStatus, code: row.lastErrorCode, message: row.lastErrorMessage }
        : null,
    updatedAt: iso(row.updatedAt)!,
    lastEventAt: iso(row.lastEventAt),
    control: threadControl(row.source),
    alsoReportedBy: [],
    // A scheduled continuation is the only thing a thread in that status wakes for.
    resumeAt: row.status === "recovery_scheduled" ? iso(row.wakeAt) : null,
    archivedAt: iso(row.archivedAt),
    snoozedUntil: row.snoozedUntil !== null && Number(row.snoozedUntil) > now ? iso(row.snoozedUntil) : null,
  };
}

export function viewsOf(rows: SqlViewRow[], now: number): ThreadView[] {
  return rows.map(({ sourceName, sourceCapabilities, sourceLastPolledAt, sourceLastOtlpAt, ...row }) =>
    toThreadView(
      {
        ...row,
        source: {
          name: sourceName,
          capabilities: sourceCapabilities,
          lastPolledAt: sourceLastPolledAt === null ? null : Number(sourceLastPolledAt),
          lastOtlpAt: sourceLastOtlpAt === null ? null : Number(sourceLastOtlpAt),
        },
      } as ViewRow,
      now,
    ),
  );
}

/** The columns of one other path that reports a thread (a thread joined to it, lib/db/thread-join.ts). */
export interface OtherPathRow {
  key: number;
  joinedTo: number;
  sourceId: string;
  source: string;
}

/** Names the other paths that report each thread. */
export function withOtherPaths(views: ThreadView[], joined: OtherPathRow[]): ThreadView[] {
  return views.map((view) => ({
    ...view,
    alsoReportedBy: joined.filter((other) => other.joinedTo === view.key).map(({ key, source, sourceId }) => ({ key, source, sourceId })),
  }));
}

/** An episode as the thread page reads it on either store (times in epoch ms). */
export interface EpisodeRow {
  id: number;
  seq: number;
  turnId: string | null;
  kind: string;
  policy: string | null;
  maxAttempts: number | null;
  startedAt: number;
  endedAt: number | null;
  outcome: string | null;
  outcomeCode: string | null;
  outcomeReason: string | null;
  resetAt: number | null;
  attemptsMade: number;
  reportedRetryMs: number | null;
}

/** An attempt of one of the thread's episodes (`episodeId`), as the thread page reads it. */
export interface AttemptRow {
  episodeId: number;
  n: number;
  noticeAt: number;
  advisedDelayMs: number | null;
  expectedAt: number | null;
  estimated: boolean | number;
  deadlineAt: number | null;
  startedAt: number | null;
  earlyByMs: number | null;
  httpStatus: number | null;
  code: string | null;
  message: string | null;
}

/** A directive in the thread's history, as the thread page reads it (times in epoch ms). */
export type DirectiveHistoryRow = Omit<DirectiveHistory, "createdAt" | "deliveredAt" | "acknowledgedAt"> & {
  createdAt: number;
  deliveredAt: number | null;
  acknowledgedAt: number | null;
};

/** Each episode in order with its attempts in order (`attempts` ordered by episode, then n). */
export function toEpisodeViews(episodes: EpisodeRow[], attempts: AttemptRow[]): EpisodeView[] {
  const byEpisode = new Map<number, AttemptRow[]>();
  for (const attempt of attempts) {
    const ofEpisode = byEpisode.get(attempt.episodeId);
    if (ofEpisode) ofEpisode.push(attempt);
    else byEpisode.set(attempt.episodeId, [attempt]);
  }
  return episodes.map((episode) => ({
    seq: episode.seq,
    turnId: episode.turnId,
    kind: episode.kind,
    policy: episode.policy,
    maxAttempts: episode.maxAttempts,
    startedAt: iso(episode.startedAt)!,
    endedAt: iso(episode.endedAt),
    outcome: episode.outcome,
    outcomeCode: episode.outcomeCode,
    outcomeReason: episode.outcomeReason,
    resetAt: iso(episode.resetAt),
    attemptsMade: Number(episode.attemptsMade),
    reportedRetryMs: episode.reportedRetryMs === null ? null : Number(episode.reportedRetryMs),
    attempts: (byEpisode.get(episode.id) ?? []).map((attempt) => ({
      n: attempt.n,
      noticeAt: iso(attempt.noticeAt)!,
      advisedDelayMs: attempt.advisedDelayMs,
      expectedAt: iso(attempt.expectedAt),
      estimated: Boolean(attempt.estimated),
      deadlineAt: iso(attempt.deadlineAt),
      startedAt: iso(attempt.startedAt),
      actualGapMs: attempt.startedAt === null ? null : attempt.startedAt - attempt.noticeAt,
      earlyByMs: attempt.earlyByMs,
      httpStatus: attempt.httpStatus,
      code: attempt.code,
      message: attempt.message,
    })),
  }));
}

export function toDirectiveHistory(directive: DirectiveHistoryRow): DirectiveHistory {
  return {
    id: directive.id,
    kind: directive.kind,
    origin: directive.origin,
    reason: directive.reason,
    state: directive.state,
    turnId: directive.turnId,
    createdAt: iso(directive.createdAt)!,
    deliveredAt: iso(directive.deliveredAt),
    acknowledgedAt: iso(directive.acknowledgedAt),
    result: directive.result,
    detail: directive.detail,
  };
}

/**
 * The newest page of a thread's events with the newest page of each path joined to it merged in
 * reducer order (time, then sequence), listed in reducer order; the earlier pages are the thread's own.
 */
export function mergedEvents(own: EventView[], joined: EventView[]): EventView[] {
  const newestFirst = joined.length ? [...own, ...joined].sort((a, b) => b.at.localeCompare(a.at) || b.seq - a.seq) : own;
  return newestFirst.toReversed();
}

/** The thread row of a thread page: what the board shows of it, its engine state and the thread it is joined to. */
export type DetailRow = SqlViewRow & { state: string; joinedTo: number | null };

/**
 * Everything a thread page shows, as each store reads it in one snapshot (lib/db/threads.ts,
 * lib/db/postgres/threads.ts): the thread's status, episodes and directives never disagree.
 */
export interface DetailRows {
  thread: DetailRow;
  /** The threads joined to this one (lib/db/thread-join.ts). */
  otherPaths: OtherPathRow[];
  parent: SqlViewRow | null;
  children: SqlViewRow[];
  joinedTo: SqlViewRow | null;
  episodes: EpisodeRow[];
  attempts: AttemptRow[];
  directives: DirectiveHistoryRow[];
  events: EventPage;
  /** The newest page of each thread joined to this one. */
  joinedEvents: EventPage[];
  limits: BlockingWindow[];
}

export function toThreadDetail(rows: DetailRows, now: number): ThreadDetail {
  const [thread] = withOtherPaths(viewsOf([rows.thread], now), rows.otherPaths);
  const view = (row: SqlViewRow | null) => (row === null ? null : viewsOf([row], now)[0]);
  return {
    thread,
    parent: view(rows.parent),
    children: viewsOf(rows.children, now),
    episodes: toEpisodeViews(rows.episodes, rows.attempts),
    events: mergedEvents(rows.events.events, rows.joinedEvents.flatMap((page) => page.events)),
    earlierEvents: rows.events.earlier,
    directives: rows.directives.map(toDirectiveHistory),
    state: parseState(rows.thread.state),
    limits: rows.limits,
    joinedTo: view(rows.joinedTo),
  };
}

/** How many threads of `counts` have one of `statuses` (all of them when `statuses` is empty or absent). */
export function countOf(counts: Record<string, number>, statuses: string[] | undefined, within?: string[]): number {
  let sum = 0;
  for (const [status, n] of Object.entries(counts)) {
    if (statuses?.length && !statuses.includes(status)) continue;
    if (within && !within.includes(status)) continue;
    sum += n;
  }
  return sum;
}

export interface PageOptions {
  page?: number;
  pageSize?: number;
  attentionFirst?: boolean;
}

/** One run of a page's keys: the matching threads newest first, of one part (attention statuses, the others, or all). */
export interface KeySlice {
  part: "attention" | "rest" | null;
  take: number;
  offset: number;
}

/**
 * Which keys one page of the board reads, from its totals (the status counts of the same
 * snapshot): `attentionFirst` puts the statuses an operator must act on before the rest.
 */
export function pageSlices(options: PageOptions, totals: { total: number; attention: number }): { page: number; pageSize: number; slices: KeySlice[] } {
  const page = Math.max(1, options.page ?? 1);
  const pageSize = Math.min(500, Math.max(1, options.pageSize ?? 50));
  const skip = (page - 1) * pageSize;
  const slices: KeySlice[] = [];
  if (!options.attentionFirst) {
    if (skip < totals.total) slices.push({ part: null, take: pageSize, offset: skip });
    return { page, pageSize, slices };
  }
  // Attention rows first, then the others; each part newest first.
  const first = skip < totals.attention ? Math.min(pageSize, totals.attention - skip) : 0;
  if (first > 0) slices.push({ part: "attention", take: pageSize, offset: skip });
  if (first < pageSize && skip + first < totals.total) slices.push({ part: "rest", take: pageSize - first, offset: Math.max(0, skip - totals.attention) });
  return { page, pageSize, slices };
}

/** A thread as the SQL readers project it (exports, the insights' top threads), on either store. */
export interface ThreadProjection {
  _key: number;
  threadId: string;
  sourceId: string;
  source: string;
  title: string | null;
  agent: string | null;
  provider: string | null;
  model: string | null;
  status: string;
  [column: string]: unknown;
}
