-- What each source stores, for its storage quota and the Sources page. Counted after the fact
-- from the events' ids (UsageTally.countedThrough), never per inserted row: ingestion pays
-- nothing for it. Retention subtracts what it deletes in the same transaction.
CREATE TABLE "SourceUsage" (
    "sourceId" TEXT NOT NULL PRIMARY KEY,
    "events" INTEGER NOT NULL DEFAULT 0,
    "bytes" INTEGER NOT NULL DEFAULT 0,
    CONSTRAINT "SourceUsage_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- One row: every event with an id up to this one is counted in SourceUsage.
CREATE TABLE "UsageTally" (
    "id" INTEGER NOT NULL PRIMARY KEY CHECK ("id" = 1),
    "countedThrough" INTEGER NOT NULL
);

INSERT INTO "SourceUsage" ("sourceId", "events", "bytes")
SELECT "sourceId", count(*), coalesce(sum(octet_length("raw") + octet_length("normalized")), 0) FROM "Event" GROUP BY "sourceId";
INSERT INTO "UsageTally" ("id", "countedThrough") SELECT 1, coalesce(max("id"), 0) FROM "Event";

-- Retention deletes the idempotency keys of the events it prunes.
CREATE INDEX "IngestKey_eventId_idx" ON "IngestKey"("eventId");
