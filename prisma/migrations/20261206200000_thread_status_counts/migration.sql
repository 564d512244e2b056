-- Threads per status as readers show them (the board's counts, the metrics' thread gauge) are
-- counted from this index alone: every column they filter and group by is in it, so the count
-- never reads the rows, whose stored engine state makes them large.
CREATE INDEX "Thread_joinedTo_status_deadlineAt_archivedAt_snoozedUntil_idx" ON "Thread"("joinedTo", "status", "deadlineAt", "archivedAt", "snoozedUntil");
