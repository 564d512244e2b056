-- What a source's relay announced it can carry out (comma-separated: interrupt, continue) when it
-- last polled for directives, and when that was (lib/threads/control.ts decides from them).
ALTER TABLE "Source" ADD COLUMN "capabilities" TEXT;
ALTER TABLE "Source" ADD COLUMN "lastPolledAt" DATETIME;
