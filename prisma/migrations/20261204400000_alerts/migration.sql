-- Alerts (lib/db/alerts.ts): where alerts go, which facts raise them, the durable outbox they
-- wait in until delivered, every delivery attempt, and the conditions currently raised.

-- A webhook: generic JSON or a Slack-compatible body, signed with its own secret.
CREATE TABLE "AlertDestination" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "name" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "format" TEXT NOT NULL,
    "secret" TEXT NOT NULL,
    "createdAt" INTEGER NOT NULL,
    "createdBy" TEXT NOT NULL
);

-- A rule: an alert event (incident.opened, source.silent, …) sent to one destination.
CREATE TABLE "AlertRule" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "destinationId" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "threshold" REAL,
    "createdAt" INTEGER NOT NULL,
    "createdBy" TEXT NOT NULL
);
CREATE INDEX "AlertRule_event_idx" ON "AlertRule"("event");

-- One alert for one destination, written in the unit of work of the fact that raised it;
-- `dedupeKey` makes the same fact raise it once per rule.
CREATE TABLE "AlertOutbox" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "dedupeKey" TEXT NOT NULL,
    "ruleId" TEXT,
    "destinationId" TEXT NOT NULL,
    "event" TEXT NOT NULL,
    "alert" TEXT NOT NULL,
    "state" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "createdAt" INTEGER NOT NULL,
    "nextAttemptAt" INTEGER NOT NULL,
    "lastAttemptAt" INTEGER,
    "lastStatus" INTEGER,
    "lastError" TEXT,
    "deliveredAt" INTEGER
);
CREATE UNIQUE INDEX "AlertOutbox_dedupeKey_destinationId_key" ON "AlertOutbox"("dedupeKey", "destinationId");
CREATE INDEX "AlertOutbox_state_nextAttemptAt_idx" ON "AlertOutbox"("state", "nextAttemptAt");
CREATE INDEX "AlertOutbox_createdAt_idx" ON "AlertOutbox"("createdAt");

-- Every attempt to deliver an alert and what the receiver answered.
CREATE TABLE "AlertDelivery" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "outboxId" INTEGER NOT NULL,
    "at" INTEGER NOT NULL,
    "status" INTEGER,
    "error" TEXT,
    "result" TEXT NOT NULL,
    "durationMs" INTEGER NOT NULL
);
CREATE INDEX "AlertDelivery_outboxId_idx" ON "AlertDelivery"("outboxId");

-- A condition (a silent source, a relay that stopped polling, …) raised and not yet cleared.
CREATE TABLE "AlertCondition" (
    "key" TEXT NOT NULL PRIMARY KEY,
    "event" TEXT NOT NULL,
    "raisedAt" INTEGER NOT NULL,
    "subject" TEXT NOT NULL
);

-- Operators silence an incident's alerts until this time.
ALTER TABLE "Incident" ADD COLUMN "silencedUntil" INTEGER;

-- How often each source usually reports, learnt by the alert worker from its last-seen times:
-- a source is silent when quiet for much longer than that.
CREATE TABLE "AlertSourceRhythm" (
    "sourceId" TEXT NOT NULL PRIMARY KEY,
    "lastSeenAt" INTEGER NOT NULL,
    "usualGapMs" INTEGER
);
