-- The board's index: threads newest first with every column the board's counts, its default
-- filter and the metrics' thread gauge read. Counting threads per shown status and finding a
-- page's keys read it alone, never the rows, which the stored engine state makes large.
CREATE INDEX "Thread_updatedAt_id_status_deadlineAt_joinedTo_archivedAt_snoozedUntil_idx" ON "Thread"("updatedAt", "id", "status", "deadlineAt", "joinedTo", "archivedAt", "snoozedUntil");
