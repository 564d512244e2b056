-- Each thread's finished waits of all time, the bound by which insights find the top threads of
-- a long range (lib/db/rollups.ts). Filled from the hour rollups, as `npm run rollups -- rebuild` does.
CREATE TABLE "ThreadWaitTotal" (
    "threadId" INTEGER NOT NULL PRIMARY KEY,
    "ms" INTEGER NOT NULL DEFAULT 0
);

CREATE INDEX "ThreadWaitTotal_ms_idx" ON "ThreadWaitTotal"("ms");

INSERT INTO "ThreadWaitTotal" (threadId, ms) SELECT CAST(label AS INTEGER), sum(ms) FROM "RollupHour" WHERE fact = 'threadWait' GROUP BY label;
