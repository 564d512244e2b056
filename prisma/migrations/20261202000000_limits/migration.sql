-- Usage windows (lib/db/limits.ts): every snapshot as history, and the latest one per window.
CREATE TABLE "LimitSnapshot" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "sourceId" TEXT NOT NULL,
    "account" TEXT NOT NULL DEFAULT '',
    "provider" TEXT NOT NULL,
    "window" TEXT NOT NULL,
    "usedPercent" REAL,
    "windowMinutes" INTEGER,
    "resetAt" INTEGER,
    "status" TEXT NOT NULL,
    "observedAt" INTEGER NOT NULL,
    "threadId" TEXT,
    "reachedType" TEXT
);
CREATE INDEX "LimitSnapshot_sourceId_account_provider_window_observedAt_idx" ON "LimitSnapshot"("sourceId", "account", "provider", "window", "observedAt");
CREATE INDEX "LimitSnapshot_observedAt_idx" ON "LimitSnapshot"("observedAt");

CREATE TABLE "LimitWindow" (
    "sourceId" TEXT NOT NULL,
    "account" TEXT NOT NULL DEFAULT '',
    "provider" TEXT NOT NULL,
    "window" TEXT NOT NULL,
    "usedPercent" REAL,
    "windowMinutes" INTEGER,
    "resetAt" INTEGER,
    "status" TEXT NOT NULL,
    "observedAt" INTEGER NOT NULL,
    "threadId" TEXT,
    "reachedType" TEXT,
    PRIMARY KEY ("sourceId", "account", "provider", "window")
) WITHOUT ROWID;
