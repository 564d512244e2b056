-- Archive and snooze: an archived thread is hidden from the board until unarchived; a snoozed
-- one until the time given. Resume at reset is opt-in per source, like capacity recovery.
ALTER TABLE "Thread" ADD COLUMN "archivedAt" DATETIME;
ALTER TABLE "Thread" ADD COLUMN "snoozedUntil" DATETIME;
ALTER TABLE "Source" ADD COLUMN "resumeAtReset" BOOLEAN NOT NULL DEFAULT false;
