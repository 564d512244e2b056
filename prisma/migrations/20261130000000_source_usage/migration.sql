-- What each source stores, kept by triggers in the same transaction as the events themselves, so
-- the quota check reads one row instead of scanning the events and no crash can skew it.
CREATE TABLE "SourceUsage" (
    "sourceId" TEXT NOT NULL PRIMARY KEY,
    "events" INTEGER NOT NULL DEFAULT 0,
    "bytes" INTEGER NOT NULL DEFAULT 0,
    CONSTRAINT "SourceUsage_sourceId_fkey" FOREIGN KEY ("sourceId") REFERENCES "Source" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

INSERT INTO "SourceUsage" ("sourceId", "events", "bytes")
SELECT "sourceId", count(*), coalesce(sum(octet_length("raw") + octet_length("normalized")), 0) FROM "Event" GROUP BY "sourceId";

CREATE TRIGGER "Event_usage_insert" AFTER INSERT ON "Event" BEGIN
    INSERT INTO "SourceUsage" ("sourceId", "events", "bytes") VALUES (NEW."sourceId", 1, octet_length(NEW."raw") + octet_length(NEW."normalized"))
    ON CONFLICT ("sourceId") DO UPDATE SET "events" = "events" + 1, "bytes" = "bytes" + excluded."bytes";
END;

CREATE TRIGGER "Event_usage_update" AFTER UPDATE OF "raw", "normalized" ON "Event" BEGIN
    UPDATE "SourceUsage"
    SET "bytes" = "bytes" + octet_length(NEW."raw") + octet_length(NEW."normalized") - octet_length(OLD."raw") - octet_length(OLD."normalized")
    WHERE "sourceId" = NEW."sourceId";
END;

CREATE TRIGGER "Event_usage_delete" AFTER DELETE ON "Event" BEGIN
    UPDATE "SourceUsage"
    SET "events" = "events" - 1, "bytes" = "bytes" - octet_length(OLD."raw") - octet_length(OLD."normalized")
    WHERE "sourceId" = OLD."sourceId";
END;

-- Retention deletes the idempotency keys of the events it prunes.
CREATE INDEX "IngestKey_eventId_idx" ON "IngestKey"("eventId");
