import { viewStatusSql } from "./thread-filter";

/**
 * A thread row as the SQL readers project it (exports, the insights' top threads): the status as
 * displayed (`stalled` derived), the source's name joined. `_sort` and `_key` page an export.
 * One `?`: now. The Prisma readers project the same row in threads.ts (toThreadView).
 */
export const THREAD_SELECT = `SELECT t.id AS _sort, t.id AS _key, t.externalId AS threadId, t.sourceId, s.name AS source, t.title, t.agent,
    t.provider, t.model, t.parentExternalId AS parentThreadId, ${viewStatusSql()} AS status, t.turnId, t.retryKind,
    t.retryAttempt, t.retryMaxAttempts, t.nextAttemptAt, t.nextAttemptEstimated, t.deadlineAt, t.resetAt,
    t.advisedDelayMs, t.policy, t.lastErrorKind, t.lastErrorHttpStatus, t.lastErrorCode, t.lastErrorMessage,
    t.createdAt, t.updatedAt, t.lastEventAt
  FROM "Thread" t JOIN "Source" s ON s.id = t.sourceId`;

export type { ThreadProjection } from "./records/threads";
