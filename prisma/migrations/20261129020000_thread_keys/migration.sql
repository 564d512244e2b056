-- Directive keys come from the agent's own thread id, which two sources may share: unique per thread.
DROP INDEX "Directive_dedupeKey_key";
CREATE UNIQUE INDEX "Directive_threadId_dedupeKey_key" ON "Directive"("threadId", "dedupeKey");

-- The settings a thread started with, so a replay starts from them rather than today's.
ALTER TABLE "Thread" ADD COLUMN "initialSettings" TEXT;
