-- Retry Radar's schema on PostgreSQL: the tables, columns, keys and indexes of every migration in
-- prisma/migrations applied (a new database has no data to backfill, so this one script stands for
-- them all). lib/db/postgres/schema.pg.test.ts proves both stores end up with the same structure;
-- a later SQLite migration needs its PostgreSQL twin in this folder.
-- Times are TIMESTAMP(3) in UTC (prisma/postgres/schema.prisma says why); ids are SERIAL.

CREATE TABLE "User" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "emailVerified" BOOLEAN NOT NULL DEFAULT false,
    "image" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "role" TEXT NOT NULL DEFAULT 'viewer',
    "banned" BOOLEAN DEFAULT false,
    "banReason" TEXT,
    "banExpires" TIMESTAMP(3),
    CONSTRAINT "User_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "User_email_key" ON "User"("email");

CREATE TABLE "Account" (
    "id" TEXT NOT NULL,
    "accountId" TEXT NOT NULL,
    "providerId" TEXT NOT NULL,
    "userId" TEXT NOT NULL,
    "accessToken" TEXT,
    "refreshToken" TEXT,
    "idToken" TEXT,
    "accessTokenExpiresAt" TIMESTAMP(3),
    "refreshTokenExpiresAt" TIMESTAMP(3),
    "scope" TEXT,
    "password" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "Account_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "Account_userId_idx" ON "Account"("userId");

CREATE TABLE "AlertCondition" (
    "key" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "raisedAt" TIMESTAMP(3) NOT NULL,
    "subject" TEXT NOT NULL,
    CONSTRAINT "AlertCondition_pkey" PRIMARY KEY ("key")
);

CREATE TABLE "AlertDelivery" (
    "id" SERIAL NOT NULL,
    "outboxId" INTEGER NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "status" INTEGER,
    "error" TEXT,
    "result" TEXT NOT NULL,
    "durationMs" INTEGER NOT NULL,
    CONSTRAINT "AlertDelivery_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "AlertDelivery_outboxId_idx" ON "AlertDelivery"("outboxId");

CREATE TABLE "AlertDestination" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "format" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "createdBy" TEXT NOT NULL,
    CONSTRAINT "AlertDestination_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "AlertOutbox" (
    "id" SERIAL NOT NULL,
    "dedupeKey" TEXT NOT NULL,
    "ruleId" TEXT,
    "destinationId" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "alert" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "nextAttemptAt" TIMESTAMP(3) NOT NULL,
    "lastAttemptAt" TIMESTAMP(3),
    "lastStatus" INTEGER,
    "lastError" TEXT,
    "deliveredAt" TIMESTAMP(3),
    CONSTRAINT "AlertOutbox_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "AlertOutbox_createdAt_idx" ON "AlertOutbox"("createdAt");
CREATE INDEX "AlertOutbox_state_nextAttemptAt_idx" ON "AlertOutbox"("state", "nextAttemptAt");
CREATE UNIQUE INDEX "AlertOutbox_dedupeKey_destinationId_key" ON "AlertOutbox"("dedupeKey", "destinationId");

CREATE TABLE "AlertRule" (
    "id" TEXT NOT NULL,
    "destinationId" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "threshold" DOUBLE PRECISION,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "createdBy" TEXT NOT NULL,
    CONSTRAINT "AlertRule_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "AlertRule_event_idx" ON "AlertRule"("event");

CREATE TABLE "AlertSourceRhythm" (
    "sourceId" TEXT NOT NULL,
    "lastSeenAt" TIMESTAMP(3) NOT NULL,
    "usualGapMs" INTEGER,
    CONSTRAINT "AlertSourceRhythm_pkey" PRIMARY KEY ("sourceId")
);

CREATE TABLE "ApiKey" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "keyHash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "ownerId" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "lastUsedAt" TIMESTAMP(3),
    "revokedAt" TIMESTAMP(3),
    CONSTRAINT "ApiKey_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "ApiKey_name_idx" ON "ApiKey"("name");
CREATE UNIQUE INDEX "ApiKey_keyHash_key" ON "ApiKey"("keyHash");

CREATE TABLE "Source" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "lastSeenAt" TIMESTAMP(3),
    "policy" TEXT,
    "capacityRecovery" BOOLEAN NOT NULL DEFAULT false,
    "lastOtlpAt" TIMESTAMP(3),
    "capabilities" TEXT,
    "lastPolledAt" TIMESTAMP(3),
    "resumeAtReset" BOOLEAN NOT NULL DEFAULT false,
    "incidentMinThreads" INTEGER,
    "incidentWindowMs" INTEGER,
    CONSTRAINT "Source_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "Thread" (
    "id" SERIAL NOT NULL,
    "sourceId" TEXT NOT NULL,
    "externalId" TEXT NOT NULL,
    "parentExternalId" TEXT,
    "title" TEXT,
    "agent" TEXT,
    "provider" TEXT,
    "model" TEXT,
    "policy" TEXT,
    "status" TEXT NOT NULL,
    "turnId" TEXT,
    "retryKind" TEXT,
    "retryAttempt" INTEGER,
    "retryMaxAttempts" INTEGER,
    "nextAttemptAt" TIMESTAMP(3),
    "nextAttemptEstimated" BOOLEAN NOT NULL DEFAULT false,
    "deadlineAt" TIMESTAMP(3),
    "resetAt" TIMESTAMP(3),
    "advisedDelayMs" INTEGER,
    "lastErrorKind" TEXT,
    "lastErrorHttpStatus" INTEGER,
    "lastErrorCode" TEXT,
    "lastErrorMessage" TEXT,
    "wakeAt" TIMESTAMP(3),
    "state" TEXT NOT NULL,
    "lastEventAt" TIMESTAMP(3),
    "openProgressEventId" INTEGER,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "initialSettings" TEXT,
    "archivedAt" TIMESTAMP(3),
    "snoozedUntil" TIMESTAMP(3),
    "joinedTo" INTEGER,
    CONSTRAINT "Thread_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "Thread_joinedTo_idx" ON "Thread"("joinedTo");
CREATE INDEX "Thread_externalId_idx" ON "Thread"("externalId");
CREATE INDEX "Thread_sourceId_parentExternalId_idx" ON "Thread"("sourceId", "parentExternalId");
CREATE INDEX "Thread_wakeAt_idx" ON "Thread"("wakeAt");
CREATE INDEX "Thread_updatedAt_idx" ON "Thread"("updatedAt");
CREATE INDEX "Thread_status_updatedAt_idx" ON "Thread"("status", "updatedAt");
CREATE UNIQUE INDEX "Thread_sourceId_externalId_key" ON "Thread"("sourceId", "externalId");

CREATE TABLE "Episode" (
    "id" SERIAL NOT NULL,
    "threadId" INTEGER NOT NULL,
    "seq" INTEGER NOT NULL,
    "turnId" TEXT,
    "kind" TEXT NOT NULL,
    "policy" TEXT,
    "maxAttempts" INTEGER,
    "startedAt" TIMESTAMP(3) NOT NULL,
    "endedAt" TIMESTAMP(3),
    "outcome" TEXT,
    "outcomeCode" TEXT,
    "outcomeReason" TEXT,
    "resetAt" TIMESTAMP(3),
    CONSTRAINT "Episode_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "Episode_endedAt_idx" ON "Episode"("endedAt");
CREATE INDEX "Episode_outcome_endedAt_idx" ON "Episode"("outcome", "endedAt");
CREATE INDEX "Episode_startedAt_idx" ON "Episode"("startedAt");
CREATE UNIQUE INDEX "Episode_threadId_seq_key" ON "Episode"("threadId", "seq");

CREATE TABLE "Attempt" (
    "id" SERIAL NOT NULL,
    "episodeId" INTEGER NOT NULL,
    "n" INTEGER NOT NULL,
    "noticeAt" TIMESTAMP(3) NOT NULL,
    "advisedDelayMs" INTEGER,
    "expectedAt" TIMESTAMP(3),
    "estimated" BOOLEAN NOT NULL DEFAULT false,
    "deadlineAt" TIMESTAMP(3),
    "startedAt" TIMESTAMP(3),
    "earlyByMs" INTEGER,
    "httpStatus" INTEGER,
    "code" TEXT,
    "message" TEXT,
    CONSTRAINT "Attempt_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "Attempt_startedAt_idx" ON "Attempt"("startedAt");
CREATE INDEX "Attempt_noticeAt_idx" ON "Attempt"("noticeAt");
CREATE UNIQUE INDEX "Attempt_episodeId_n_key" ON "Attempt"("episodeId", "n");

CREATE TABLE "AuditEntry" (
    "id" SERIAL NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "target" TEXT,
    "reason" TEXT,
    "result" TEXT NOT NULL,
    "detail" TEXT,
    CONSTRAINT "AuditEntry_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "AuditEntry_at_idx" ON "AuditEntry"("at");

CREATE TABLE "Directive" (
    "id" TEXT NOT NULL,
    "sourceId" TEXT NOT NULL,
    "threadId" INTEGER NOT NULL,
    "dedupeKey" TEXT NOT NULL,
    "turnId" TEXT,
    "kind" TEXT NOT NULL,
    "origin" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "deliveredAt" TIMESTAMP(3),
    "acknowledgedAt" TIMESTAMP(3),
    "result" TEXT,
    "detail" TEXT,
    CONSTRAINT "Directive_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "Directive_threadId_dedupeKey_key" ON "Directive"("threadId", "dedupeKey");
CREATE INDEX "Directive_threadId_idx" ON "Directive"("threadId");
CREATE INDEX "Directive_sourceId_state_idx" ON "Directive"("sourceId", "state");

CREATE TABLE "Event" (
    "id" SERIAL NOT NULL,
    "sourceId" TEXT NOT NULL,
    "threadId" INTEGER,
    "idempotencyKey" TEXT NOT NULL,
    "format" TEXT NOT NULL,
    "nativeType" TEXT,
    "type" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "receivedAt" TIMESTAMP(3) NOT NULL,
    "lastAt" TIMESTAMP(3),
    "count" INTEGER NOT NULL DEFAULT 1,
    "turnId" TEXT,
    "attempt" INTEGER,
    "maxAttempts" INTEGER,
    "delayMs" INTEGER,
    "kind" TEXT,
    "httpStatus" INTEGER,
    "code" TEXT,
    "message" TEXT,
    "late" BOOLEAN NOT NULL DEFAULT false,
    "raw" TEXT NOT NULL,
    "normalized" TEXT NOT NULL,
    CONSTRAINT "Event_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "Event_type_at_kind_threadId_idx" ON "Event"("type", "at", "kind", "threadId");
CREATE INDEX "Event_at_idx" ON "Event"("at");
CREATE INDEX "Event_threadId_at_idx" ON "Event"("threadId", "at");
CREATE UNIQUE INDEX "Event_sourceId_idempotencyKey_key" ON "Event"("sourceId", "idempotencyKey");

CREATE TABLE "Incident" (
    "id" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "provider" TEXT,
    "model" TEXT,
    "sourceId" TEXT,
    "startedAt" TIMESTAMP(3) NOT NULL,
    "lastNoticeAt" TIMESTAMP(3) NOT NULL,
    "endedAt" TIMESTAMP(3),
    "closedBy" TEXT,
    "notices" INTEGER NOT NULL,
    "resetAt" TIMESTAMP(3),
    "threadCount" INTEGER NOT NULL,
    "threads" TEXT NOT NULL,
    "acknowledgedBy" TEXT,
    "acknowledgedAt" TIMESTAMP(3),
    "silencedUntil" TIMESTAMP(3),
    CONSTRAINT "Incident_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "Incident_state_startedAt_idx" ON "Incident"("state", "startedAt");

CREATE TABLE "IncidentNote" (
    "id" SERIAL NOT NULL,
    "incidentId" TEXT NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "actor" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    CONSTRAINT "IncidentNote_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "IncidentNote_incidentId_at_idx" ON "IncidentNote"("incidentId", "at");

CREATE TABLE "IngestKey" (
    "sourceId" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "eventId" INTEGER NOT NULL,
    CONSTRAINT "IngestKey_pkey" PRIMARY KEY ("sourceId", "key")
);
CREATE INDEX "IngestKey_eventId_idx" ON "IngestKey"("eventId");

CREATE TABLE "IngestToken" (
    "id" TEXT NOT NULL,
    "sourceId" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "label" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "revokedAt" TIMESTAMP(3),
    CONSTRAINT "IngestToken_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "IngestToken_sourceId_idx" ON "IngestToken"("sourceId");
CREATE UNIQUE INDEX "IngestToken_tokenHash_key" ON "IngestToken"("tokenHash");

CREATE TABLE "LimitSnapshot" (
    "id" SERIAL NOT NULL,
    "sourceId" TEXT NOT NULL,
    "account" TEXT NOT NULL DEFAULT '',
    "provider" TEXT NOT NULL,
    "window" TEXT NOT NULL,
    "usedPercent" DOUBLE PRECISION,
    "windowMinutes" INTEGER,
    "resetAt" TIMESTAMP(3),
    "status" TEXT NOT NULL,
    "observedAt" TIMESTAMP(3) NOT NULL,
    "threadId" TEXT,
    "reachedType" TEXT,
    CONSTRAINT "LimitSnapshot_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "LimitSnapshot_observedAt_idx" ON "LimitSnapshot"("observedAt");
CREATE INDEX "LimitSnapshot_sourceId_account_provider_window_observedAt_idx" ON "LimitSnapshot"("sourceId", "account", "provider", "window", "observedAt");

CREATE TABLE "LimitWindow" (
    "sourceId" TEXT NOT NULL,
    "account" TEXT NOT NULL DEFAULT '',
    "provider" TEXT NOT NULL,
    "window" TEXT NOT NULL,
    "usedPercent" DOUBLE PRECISION,
    "windowMinutes" INTEGER,
    "resetAt" TIMESTAMP(3),
    "status" TEXT NOT NULL,
    "observedAt" TIMESTAMP(3) NOT NULL,
    "threadId" TEXT,
    "reachedType" TEXT,
    CONSTRAINT "LimitWindow_pkey" PRIMARY KEY ("sourceId", "account", "provider", "window")
);

CREATE TABLE "MetricTotal" (
    "fact" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "agent" TEXT NOT NULL,
    "label" TEXT NOT NULL DEFAULT '',
    "n" INTEGER NOT NULL DEFAULT 0,
    "ms" BIGINT NOT NULL DEFAULT 0,
    "waited" INTEGER NOT NULL DEFAULT 0,
    "judged" INTEGER NOT NULL DEFAULT 0,
    "early" INTEGER NOT NULL DEFAULT 0,
    "earlyMs" BIGINT NOT NULL DEFAULT 0,
    CONSTRAINT "MetricTotal_pkey" PRIMARY KEY ("fact", "kind", "provider", "model", "agent", "label")
);

CREATE TABLE "Rollup" (
    "fact" TEXT NOT NULL,
    "minute" TIMESTAMP(3) NOT NULL,
    "kind" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "agent" TEXT NOT NULL,
    "sourceId" TEXT NOT NULL,
    "label" TEXT NOT NULL DEFAULT '',
    "n" INTEGER NOT NULL DEFAULT 0,
    "ms" BIGINT NOT NULL DEFAULT 0,
    "waited" INTEGER NOT NULL DEFAULT 0,
    "judged" INTEGER NOT NULL DEFAULT 0,
    "early" INTEGER NOT NULL DEFAULT 0,
    "earlyMs" BIGINT NOT NULL DEFAULT 0,
    CONSTRAINT "Rollup_pkey" PRIMARY KEY ("fact", "minute", "kind", "provider", "model", "agent", "sourceId", "label")
);

CREATE TABLE "RollupHour" (
    "fact" TEXT NOT NULL,
    "hour" TIMESTAMP(3) NOT NULL,
    "kind" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "agent" TEXT NOT NULL,
    "sourceId" TEXT NOT NULL,
    "label" TEXT NOT NULL DEFAULT '',
    "n" INTEGER NOT NULL DEFAULT 0,
    "ms" BIGINT NOT NULL DEFAULT 0,
    "waited" INTEGER NOT NULL DEFAULT 0,
    "judged" INTEGER NOT NULL DEFAULT 0,
    "early" INTEGER NOT NULL DEFAULT 0,
    "earlyMs" BIGINT NOT NULL DEFAULT 0,
    CONSTRAINT "RollupHour_pkey" PRIMARY KEY ("fact", "hour", "kind", "provider", "model", "agent", "sourceId", "label")
);

CREATE TABLE "Session" (
    "id" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "token" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    "ipAddress" TEXT,
    "userAgent" TEXT,
    "userId" TEXT NOT NULL,
    "impersonatedBy" TEXT,
    CONSTRAINT "Session_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "Session_userId_idx" ON "Session"("userId");
CREATE UNIQUE INDEX "Session_token_key" ON "Session"("token");

CREATE TABLE "Setting" (
    "key" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "Setting_pkey" PRIMARY KEY ("key")
);

CREATE TABLE "SignInGuard" (
    "key" TEXT NOT NULL,
    "failures" INTEGER NOT NULL DEFAULT 0,
    "lastFailureAt" TIMESTAMP(3),
    "lockedUntil" TIMESTAMP(3),
    CONSTRAINT "SignInGuard_pkey" PRIMARY KEY ("key")
);

CREATE TABLE "SourceUsage" (
    "sourceId" TEXT NOT NULL,
    "events" INTEGER NOT NULL DEFAULT 0,
    "bytes" BIGINT NOT NULL DEFAULT 0,
    CONSTRAINT "SourceUsage_pkey" PRIMARY KEY ("sourceId")
);

CREATE TABLE "ThreadWaitTotal" (
    "threadId" INTEGER NOT NULL,
    "ms" BIGINT NOT NULL DEFAULT 0,
    CONSTRAINT "ThreadWaitTotal_pkey" PRIMARY KEY ("threadId")
);
CREATE INDEX "ThreadWaitTotal_ms_idx" ON "ThreadWaitTotal"("ms");

CREATE TABLE "Turn" (
    "id" SERIAL NOT NULL,
    "threadId" INTEGER NOT NULL,
    "externalId" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "startedAt" TIMESTAMP(3) NOT NULL,
    "endedAt" TIMESTAMP(3),
    CONSTRAINT "Turn_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "Turn_threadId_externalId_key" ON "Turn"("threadId", "externalId");

CREATE TABLE "UsageTally" (
    "id" INTEGER NOT NULL,
    "countedThrough" INTEGER NOT NULL,
    CONSTRAINT "UsageTally_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "UsageTally_id_check" CHECK ("id" = 1)
);

CREATE TABLE "Verification" (
    "id" TEXT NOT NULL,
    "identifier" TEXT NOT NULL,
    "value" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL,
    "updatedAt" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "Verification_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "Verification_identifier_idx" ON "Verification"("identifier");

-- Foreign keys last, so the tables above may come in any order.
ALTER TABLE "Account" ADD CONSTRAINT "Account_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "ApiKey" ADD CONSTRAINT "ApiKey_ownerId_fkey" FOREIGN KEY ("ownerId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Thread" ADD CONSTRAINT "Thread_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "Episode" ADD CONSTRAINT "Episode_threadId_fkey" FOREIGN KEY ("threadId") REFERENCES "Thread"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Attempt" ADD CONSTRAINT "Attempt_episodeId_fkey" FOREIGN KEY ("episodeId") REFERENCES "Episode"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Directive" ADD CONSTRAINT "Directive_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "Directive" ADD CONSTRAINT "Directive_threadId_fkey" FOREIGN KEY ("threadId") REFERENCES "Thread"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Event" ADD CONSTRAINT "Event_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "Event" ADD CONSTRAINT "Event_threadId_fkey" FOREIGN KEY ("threadId") REFERENCES "Thread"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "IngestToken" ADD CONSTRAINT "IngestToken_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
ALTER TABLE "Session" ADD CONSTRAINT "Session_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "SourceUsage" ADD CONSTRAINT "SourceUsage_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "Turn" ADD CONSTRAINT "Turn_threadId_fkey" FOREIGN KEY ("threadId") REFERENCES "Thread"("id") ON DELETE CASCADE ON UPDATE CASCADE;
