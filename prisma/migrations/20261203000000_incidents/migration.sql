-- Incidents (lib/db/incidents.ts): one wall hit by many threads, as the detector in
-- lib/retry/incidents.ts folds it; `forming` rows are its groups below the threshold, never shown.
CREATE TABLE "Incident" (
    "id" TEXT NOT NULL PRIMARY KEY,
    "state" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "provider" TEXT,
    "model" TEXT,
    "sourceId" TEXT,
    "startedAt" INTEGER NOT NULL,
    "lastNoticeAt" INTEGER NOT NULL,
    "endedAt" INTEGER,
    "closedBy" TEXT,
    "notices" INTEGER NOT NULL,
    "resetAt" INTEGER,
    "threadCount" INTEGER NOT NULL,
    "threads" TEXT NOT NULL,
    "acknowledgedBy" TEXT,
    "acknowledgedAt" INTEGER
);
CREATE INDEX "Incident_state_startedAt_idx" ON "Incident"("state", "startedAt");

-- Operators' notes on an incident, kept in its timeline.
CREATE TABLE "IncidentNote" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "incidentId" TEXT NOT NULL,
    "at" INTEGER NOT NULL,
    "actor" TEXT NOT NULL,
    "text" TEXT NOT NULL
);
CREATE INDEX "IncidentNote_incidentId_at_idx" ON "IncidentNote"("incidentId", "at");
