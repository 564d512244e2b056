-- A fresh id with every save of an incident's thread list: the fold that reads the active incidents
-- in every commit with a notice reads a list again only when its revision changed
-- (lib/db/records/incidents.ts KnownIncidentThreads). Rows saved before it have none: read once.
ALTER TABLE "Incident" ADD COLUMN "revision" TEXT NOT NULL DEFAULT '';
