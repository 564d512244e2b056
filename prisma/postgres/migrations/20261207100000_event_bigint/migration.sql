-- Event ids grow with every line a radar keeps: on PostgreSQL they are 64-bit, as SQLite's
-- INTEGER already is, and so is every column that holds one.
ALTER SEQUENCE "Event_id_seq" AS BIGINT;
ALTER TABLE "Event" ALTER COLUMN "id" SET DATA TYPE BIGINT;
ALTER TABLE "IngestKey" ALTER COLUMN "eventId" SET DATA TYPE BIGINT;
ALTER TABLE "Thread" ALTER COLUMN "openProgressEventId" SET DATA TYPE BIGINT;
