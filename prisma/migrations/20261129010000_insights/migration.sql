-- Insights (issue #6): aggregations read only index entries, never the wide Event rows.
-- Retry notices per time bucket by kind, joined to their thread: a covering index, so the
-- scan touches only the `retry` entries of the range (raw/normalized JSON stay on disk).
CREATE INDEX "Event_type_at_kind_threadId_idx" ON "Event"("type", "at", "kind", "threadId");
-- Attempts by notice time (time lost, advised vs actual gap, top threads, attempt exports).
CREATE INDEX "Attempt_noticeAt_idx" ON "Attempt"("noticeAt");
-- Episode outcomes by end time over any outcome (the (outcome, endedAt) index needs one outcome).
CREATE INDEX "Episode_endedAt_idx" ON "Episode"("endedAt");
