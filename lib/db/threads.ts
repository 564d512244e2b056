import type { Prisma } from "./generated/client";
import type { ThreadState } from "@/lib/retry/types";
import { threadControl } from "@/lib/threads/control";
import { ATTENTION_STATUSES, STOPPABLE_STATUSES } from "@/lib/threads/statuses";
import { EVENT_PAGE_SIZE, type FilterOptions, type ThreadBoard, type ThreadDetail, type ThreadPage, type ThreadView } from "@/lib/wire/types";
import { db } from "./client";
import { threadEventPage } from "./events";
import { blockingWindowKeys, windowsBlocking } from "./limits";
import { parseState } from "./thread-state";
import { isStalledRow, threadFilterSql, threadWhere, viewStatusSql, type ThreadFilter } from "./thread-filter";

/**
 * The read side for threads: the board, the threads API and the thread page read through here.
 * Statuses are stored as the engine last derived them; `stalled` is derived at read time
 * (thread-filter.ts).
 */


const threadInclude = { source: { select: { name: true, capabilities: true, lastPolledAt: true, lastOtlpAt: true } } } satisfies Prisma.ThreadInclude;
type ThreadRow = Prisma.ThreadGetPayload<{ include: typeof threadInclude }>;

const iso = (date: Date | null) => (date ? date.toISOString() : null);

function toThreadView(row: ThreadRow, now: number): ThreadView {
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
          nextAttemptEstimated: row.nextAttemptEstimated,
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
    updatedAt: row.updatedAt.toISOString(),
    lastEventAt: iso(row.lastEventAt),
    control: threadControl(row.source),
    alsoReportedBy: [],
    // A scheduled continuation is the only thing a thread in that status wakes for.
    resumeAt: row.status === "recovery_scheduled" ? iso(row.wakeAt) : null,
    archivedAt: iso(row.archivedAt),
    snoozedUntil: row.snoozedUntil && row.snoozedUntil.getTime() > now ? row.snoozedUntil.toISOString() : null,
  };
}

/**
 * Names the other paths that report each thread: the threads joined to it (lib/db/thread-join.ts).
 * One query for a whole page.
 */
async function withOtherPaths(views: ThreadView[]): Promise<ThreadView[]> {
  if (views.length === 0) return views;
  const joined = await db().prisma.thread.findMany({
    where: { joinedTo: { in: views.map((view) => view.key) } },
    select: { id: true, joinedTo: true, sourceId: true, source: { select: { name: true } } },
    orderBy: { id: "asc" },
  });
  return views.map((view) => ({
    ...view,
    alsoReportedBy: joined.filter((other) => other.joinedTo === view.key).map((other) => ({ key: other.id, source: other.source.name, sourceId: other.sourceId })),
  }));
}

/** Adds the usage window each thread waits on (one query for all of them). */
async function withLimitKeys(views: ThreadView[], now: number): Promise<ThreadView[]> {
  const keys = await blockingWindowKeys(views.filter((view) => view.resetAt !== null).map((view) => view.key), now);
  return views.map((view) => ({ ...view, limitKey: keys.get(view.key) ?? null }));
}

/**
 * One page, newest first; `attentionFirst` puts the statuses an operator must act on before the
 * rest. The totals come from the status counts (viewStatusCounts), which already hold them.
 */
async function listThreads(
  filter: ThreadFilter,
  totals: { total: number; attention: number },
  options: { page?: number; pageSize?: number; attentionFirst?: boolean; now?: number } = {},
): Promise<ThreadPage> {
  const now = options.now ?? Date.now();
  const page = Math.max(1, options.page ?? 1);
  const pageSize = Math.min(500, Math.max(1, options.pageSize ?? 50));
  const { total } = totals;
  const skip = (page - 1) * pageSize;
  const where = threadWhere(filter, now);
  const { prisma } = db();
  const newestFirst = [{ updatedAt: "desc" }, { id: "desc" }] satisfies Prisma.ThreadOrderByWithRelationInput[];
  if (!options.attentionFirst) {
    const rows = skip < total ? await prisma.thread.findMany({ where, include: threadInclude, orderBy: newestFirst, skip, take: pageSize }) : [];
    return { threads: await withLimitKeys(rows.map((row) => toThreadView(row, now)), now), total, page, pageSize };
  }
  // Attention rows first, then the others; each part newest first.
  const attention: Prisma.ThreadWhereInput = { status: { in: [...ATTENTION_STATUSES] } };
  const first =
    skip < totals.attention ? await prisma.thread.findMany({ where: { AND: [where, attention] }, include: threadInclude, orderBy: newestFirst, skip, take: pageSize }) : [];
  const rest =
    first.length < pageSize && skip + first.length < total
      ? await prisma.thread.findMany({
          where: { AND: [where, { NOT: attention }] },
          include: threadInclude,
          orderBy: newestFirst,
          skip: Math.max(0, skip - totals.attention),
          take: pageSize - first.length,
        })
      : [];
  return { threads: await withLimitKeys([...first, ...rest].map((row) => toThreadView(row, now)), now), total, page, pageSize };
}

/**
 * Threads per status as readers show it (stalled derived), in one grouped query: the board
 * header's counts, and from them the page's totals and what Stop all matching would stop.
 * Read on Prisma's connection, which no unit of work holds, so ingestion never queues it.
 */
async function viewStatusCounts(filter: Omit<ThreadFilter, "status">, now: number): Promise<Record<string, number>> {
  const clause = threadFilterSql(filter, now);
  const where = [clause.sql];
  const params: unknown[] = [now, ...clause.params];
  if (filter.from !== undefined) {
    where.push("t.updatedAt >= ?");
    params.push(filter.from);
  }
  if (filter.to !== undefined) {
    where.push("t.updatedAt <= ?");
    params.push(filter.to);
  }
  const rows = await db().prisma.$queryRawUnsafe<{ status: string; n: number | bigint }[]>(
    `SELECT ${viewStatusSql("t")} AS status, count(*) AS n FROM "Thread" t WHERE ${where.join(" AND ")} GROUP BY 1`,
    ...params,
  );
  const counts: Record<string, number> = {};
  for (const row of rows) counts[row.status] = Number(row.n);
  return counts;
}

/** How many threads of `counts` have one of `statuses` (all of them when `statuses` is empty or absent). */
function countOf(counts: Record<string, number>, statuses: string[] | undefined, within?: string[]): number {
  let sum = 0;
  for (const [status, n] of Object.entries(counts)) {
    if (statuses?.length && !statuses.includes(status)) continue;
    if (within && !within.includes(status)) continue;
    sum += n;
  }
  return sum;
}

/** The current rows of the given threads (the live board's row refetch); unknown keys are left out. */
export async function threadRows(keys: number[], now = Date.now()): Promise<ThreadView[]> {
  if (keys.length === 0) return [];
  const rows = await db().prisma.thread.findMany({ where: { id: { in: keys } }, include: threadInclude });
  return withLimitKeys(await withOtherPaths(rows.map((row) => toThreadView(row, now))), now);
}

/** Distinct values for the filter menus. */
export async function filterOptions(): Promise<FilterOptions> {
  const { prisma } = db();
  const [providers, models, sources] = await Promise.all([
    prisma.thread.findMany({ where: { provider: { not: null } }, distinct: ["provider"], select: { provider: true }, orderBy: { provider: "asc" } }),
    prisma.thread.findMany({ where: { model: { not: null } }, distinct: ["model"], select: { model: true }, orderBy: { model: "asc" } }),
    prisma.source.findMany({ select: { id: true, name: true }, orderBy: { name: "asc" } }),
  ]);
  return {
    providers: providers.map((p) => p.provider!).filter(Boolean),
    models: models.map((m) => m.model!).filter(Boolean),
    sources,
  };
}

/** All threads with this agent id (one per source that reported it). */
export async function threadsByExternalId(externalId: string, sourceId?: string | null) {
  return db().prisma.thread.findMany({
    where: { externalId, ...(sourceId ? { sourceId } : {}) },
    include: threadInclude,
    orderBy: { updatedAt: "desc" },
  });
}

/** The filter narrowed to stoppable threads, or null when it cannot match any. */
function stoppableWhere(filter: ThreadFilter, now: number): Prisma.ThreadWhereInput | null {
  const status = filter.status?.length ? filter.status.filter((s) => STOPPABLE_STATUSES.includes(s)) : STOPPABLE_STATUSES;
  return status.length ? threadWhere({ ...filter, status }, now) : null;
}

/** Internal ids of the stoppable threads matching a filter ("Stop all N matching"). */
export async function stoppableThreadKeys(filter: ThreadFilter, now = Date.now()): Promise<number[]> {
  const where = stoppableWhere(filter, now);
  if (!where) return [];
  const rows = await db().prisma.thread.findMany({ where, select: { id: true } });
  return rows.map((row) => row.id);
}

export async function threadExists(key: number): Promise<boolean> {
  return (await db().prisma.thread.count({ where: { id: key } })) > 0;
}

/**
 * One thread for its page: projection, lineage, episodes, directives and the newest page of
 * events without raw payloads (earlier events and payloads are fetched on demand), so the answer
 * does not grow with the thread's event count.
 */
export async function threadDetail(key: number, now = Date.now()): Promise<ThreadDetail | null> {
  const { prisma } = db();
  const row = await prisma.thread.findUnique({ where: { id: key }, include: threadInclude });
  if (!row) return null;
  const [episodes, events, directives, children, parent, limits, joinedTo] = await Promise.all([
    prisma.episode.findMany({ where: { threadId: key }, include: { attempts: { orderBy: { n: "asc" } } }, orderBy: { seq: "asc" } }),
    threadEventPage(key, { limit: EVENT_PAGE_SIZE }),
    prisma.directive.findMany({ where: { threadId: key }, orderBy: { createdAt: "asc" } }),
    prisma.thread.findMany({ where: { sourceId: row.sourceId, parentExternalId: row.externalId }, include: threadInclude, orderBy: { createdAt: "asc" } }),
    row.parentExternalId
      ? prisma.thread.findUnique({ where: { sourceId_externalId: { sourceId: row.sourceId, externalId: row.parentExternalId } }, include: threadInclude })
      : null,
    windowsBlocking(key, now),
    row.joinedTo === null ? null : prisma.thread.findUnique({ where: { id: row.joinedTo }, include: threadInclude }),
  ]);
  const [thread] = await withOtherPaths([toThreadView(row, now)]);
  // The other paths' newest events are merged in reducer order (time, then sequence); the
  // earlier pages are the thread's own.
  const joinedEvents = (await Promise.all(thread.alsoReportedBy.map((other) => threadEventPage(other.key, { limit: EVENT_PAGE_SIZE })))).flatMap((page) => page.events);
  const newestFirst = joinedEvents.length
    ? [...events.events, ...joinedEvents].sort((a, b) => b.at.localeCompare(a.at) || b.seq - a.seq)
    : events.events;
  return {
    thread,
    parent: parent ? toThreadView(parent, now) : null,
    children: children.map((child) => toThreadView(child, now)),
    episodes: episodes.map((episode) => ({
      seq: episode.seq,
      turnId: episode.turnId,
      kind: episode.kind,
      policy: episode.policy,
      maxAttempts: episode.maxAttempts,
      startedAt: episode.startedAt.toISOString(),
      endedAt: iso(episode.endedAt),
      outcome: episode.outcome,
      outcomeCode: episode.outcomeCode,
      outcomeReason: episode.outcomeReason,
      resetAt: iso(episode.resetAt),
      attempts: episode.attempts.map((attempt) => ({
        n: attempt.n,
        noticeAt: attempt.noticeAt.toISOString(),
        advisedDelayMs: attempt.advisedDelayMs,
        expectedAt: iso(attempt.expectedAt),
        estimated: attempt.estimated,
        deadlineAt: iso(attempt.deadlineAt),
        startedAt: iso(attempt.startedAt),
        actualGapMs: attempt.startedAt ? attempt.startedAt.getTime() - attempt.noticeAt.getTime() : null,
        earlyByMs: attempt.earlyByMs,
        httpStatus: attempt.httpStatus,
        code: attempt.code,
        message: attempt.message,
      })),
    })),
    // The page comes newest first; the detail lists it in reducer order.
    events: newestFirst.toReversed(),
    earlierEvents: events.earlier,
    directives: directives.map((directive) => ({
      id: directive.id,
      kind: directive.kind,
      origin: directive.origin,
      reason: directive.reason,
      state: directive.state,
      turnId: directive.turnId,
      createdAt: directive.createdAt.toISOString(),
      deliveredAt: iso(directive.deliveredAt),
      acknowledgedAt: iso(directive.acknowledgedAt),
      result: directive.result,
      detail: directive.detail,
    })),
    state: parseState(row.state) as ThreadState,
    limits,
    joinedTo: joinedTo ? toThreadView(joinedTo, now) : null,
  };
}

/** Everything the board and GET /api/v1/threads show for one filter. */
export async function threadBoard(
  filter: ThreadFilter,
  options: { page?: number; pageSize?: number; attentionFirst?: boolean } = {},
  now = Date.now(),
): Promise<ThreadBoard> {
  const { status, ...withoutStatus } = filter;
  const counts = await viewStatusCounts(withoutStatus, now);
  const totals = { total: countOf(counts, status), attention: countOf(counts, status, ATTENTION_STATUSES) };
  const page = await listThreads(filter, totals, { ...options, now });
  return { ...page, threads: await withOtherPaths(page.threads), counts, stoppable: countOf(counts, status, STOPPABLE_STATUSES), serverTime: new Date(now).toISOString() };
}
