-- The usage tally keeps the last event id it counted, and event ids are 64-bit
-- (20261207100000_event_bigint): an INTEGER here would fail every count once ids pass 2^31,
-- and storage quotas would stop counting. A source's event count is widened with it.
ALTER TABLE "UsageTally" ALTER COLUMN "countedThrough" SET DATA TYPE BIGINT;
ALTER TABLE "SourceUsage" ALTER COLUMN "events" SET DATA TYPE BIGINT;
