-- Retry Radar initial schema. Mirrors prisma/schema.prisma; lib/db/schema.test.ts proves they agree.
-- DateTime columns hold epoch milliseconds (adapter timestampFormat "unixepoch-ms").

CREATE TABLE "Source" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "lastSeenAt" DATETIME,
    "policy" TEXT,
    "capacityRecovery" BOOLEAN NOT NULL DEFAULT false
);

CREATE TABLE "IngestToken" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "sourceId" TEXT NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "label" TEXT,
    "createdAt" DATETIME NOT NULL,
    "revokedAt" DATETIME,
    CONSTRAINT "IngestToken_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "IngestToken_tokenHash_key" ON "IngestToken"("tokenHash");
CREATE INDEX "IngestToken_sourceId_idx" ON "IngestToken"("sourceId");

CREATE TABLE "Thread" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
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
    "nextAttemptAt" DATETIME,
    "nextAttemptEstimated" BOOLEAN NOT NULL DEFAULT false,
    "deadlineAt" DATETIME,
    "resetAt" DATETIME,
    "advisedDelayMs" INTEGER,
    "lastErrorKind" TEXT,
    "lastErrorHttpStatus" INTEGER,
    "lastErrorCode" TEXT,
    "lastErrorMessage" TEXT,
    "wakeAt" DATETIME,
    "state" TEXT NOT NULL,
    "lastEventAt" DATETIME,
    "openProgressEventId" INTEGER,
    "createdAt" DATETIME NOT NULL,
    "updatedAt" DATETIME NOT NULL,
    CONSTRAINT "Thread_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source" ("id") ON DELETE RESTRICT ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "Thread_sourceId_externalId_key" ON "Thread"("sourceId", "externalId");
CREATE INDEX "Thread_status_updatedAt_idx" ON "Thread"("status", "updatedAt");
CREATE INDEX "Thread_updatedAt_idx" ON "Thread"("updatedAt");
CREATE INDEX "Thread_wakeAt_idx" ON "Thread"("wakeAt");
CREATE INDEX "Thread_sourceId_parentExternalId_idx" ON "Thread"("sourceId", "parentExternalId");

CREATE TABLE "Turn" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "threadId" INTEGER NOT NULL,
    "externalId" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "startedAt" DATETIME NOT NULL,
    "endedAt" DATETIME,
    CONSTRAINT "Turn_threadId_fkey" FOREIGN KEY ("threadId") REFERENCES "Thread" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "Turn_threadId_externalId_key" ON "Turn"("threadId", "externalId");

CREATE TABLE "Episode" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "threadId" INTEGER NOT NULL,
    "seq" INTEGER NOT NULL,
    "turnId" TEXT,
    "kind" TEXT NOT NULL,
    "policy" TEXT,
    "maxAttempts" INTEGER,
    "startedAt" DATETIME NOT NULL,
    "endedAt" DATETIME,
    "outcome" TEXT,
    "outcomeCode" TEXT,
    "outcomeReason" TEXT,
    "resetAt" DATETIME,
    CONSTRAINT "Episode_threadId_fkey" FOREIGN KEY ("threadId") REFERENCES "Thread" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "Episode_threadId_seq_key" ON "Episode"("threadId", "seq");
CREATE INDEX "Episode_startedAt_idx" ON "Episode"("startedAt");
CREATE INDEX "Episode_outcome_endedAt_idx" ON "Episode"("outcome", "endedAt");

CREATE TABLE "Attempt" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "episodeId" INTEGER NOT NULL,
    "n" INTEGER NOT NULL,
    "noticeAt" DATETIME NOT NULL,
    "advisedDelayMs" INTEGER,
    "expectedAt" DATETIME,
    "estimated" BOOLEAN NOT NULL DEFAULT false,
    "deadlineAt" DATETIME,
    "startedAt" DATETIME,
    "earlyByMs" INTEGER,
    "httpStatus" INTEGER,
    "code" TEXT,
    "message" TEXT,
    CONSTRAINT "Attempt_episodeId_fkey" FOREIGN KEY ("episodeId") REFERENCES "Episode" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "Attempt_episodeId_n_key" ON "Attempt"("episodeId", "n");

CREATE TABLE "Event" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "sourceId" TEXT NOT NULL,
    "threadId" INTEGER,
    "idempotencyKey" TEXT NOT NULL,
    "format" TEXT NOT NULL,
    "nativeType" TEXT,
    "type" TEXT NOT NULL,
    "at" DATETIME NOT NULL,
    "receivedAt" DATETIME NOT NULL,
    "lastAt" DATETIME,
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
    CONSTRAINT "Event_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source" ("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "Event_threadId_fkey" FOREIGN KEY ("threadId") REFERENCES "Thread" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "Event_sourceId_idempotencyKey_key" ON "Event"("sourceId", "idempotencyKey");
CREATE INDEX "Event_threadId_at_idx" ON "Event"("threadId", "at");
CREATE INDEX "Event_at_idx" ON "Event"("at");

CREATE TABLE "IngestKey" (
    "sourceId" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "eventId" INTEGER NOT NULL,
    PRIMARY KEY ("sourceId", "key")
) WITHOUT ROWID;

CREATE TABLE "Directive" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "sourceId" TEXT NOT NULL,
    "threadId" INTEGER NOT NULL,
    "dedupeKey" TEXT NOT NULL,
    "turnId" TEXT,
    "kind" TEXT NOT NULL,
    "origin" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL,
    "deliveredAt" DATETIME,
    "acknowledgedAt" DATETIME,
    "result" TEXT,
    "detail" TEXT,
    CONSTRAINT "Directive_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source" ("id") ON DELETE RESTRICT ON UPDATE CASCADE,
    CONSTRAINT "Directive_threadId_fkey" FOREIGN KEY ("threadId") REFERENCES "Thread" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE UNIQUE INDEX "Directive_dedupeKey_key" ON "Directive"("dedupeKey");
CREATE INDEX "Directive_sourceId_state_idx" ON "Directive"("sourceId", "state");
CREATE INDEX "Directive_threadId_idx" ON "Directive"("threadId");

CREATE TABLE "AuditEntry" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "at" DATETIME NOT NULL,
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "target" TEXT,
    "reason" TEXT,
    "result" TEXT NOT NULL,
    "detail" TEXT
);
CREATE INDEX "AuditEntry_at_idx" ON "AuditEntry"("at");
