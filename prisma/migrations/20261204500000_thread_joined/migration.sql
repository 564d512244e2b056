-- A thread reported only through OpenTelemetry whose agent thread is also reported by a relay
-- (another source, the same agent thread id) is joined to the relay's thread (lib/db/thread-join.ts).
ALTER TABLE "Thread" ADD COLUMN "joinedTo" INTEGER;
CREATE INDEX "Thread_externalId_idx" ON "Thread"("externalId");
CREATE INDEX "Thread_joinedTo_idx" ON "Thread"("joinedTo");
