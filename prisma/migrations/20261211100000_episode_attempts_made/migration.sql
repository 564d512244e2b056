-- An episode's calls, the first included (the calls seen, or the agent's own count when larger),
-- and the agent's own total retry time. Episodes stored before count what their retries show:
-- the last retry n is call n + 1 once it started or the episode recovered, else call n.
ALTER TABLE "Episode" ADD COLUMN "attemptsMade" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "Episode" ADD COLUMN "reportedRetryMs" INTEGER;
UPDATE "Episode" SET "attemptsMade" = max(1, coalesce((
  SELECT a.n + (a.startedAt IS NOT NULL OR "Episode".outcome IN ('recovered', 'completed'))
  FROM "Attempt" a WHERE a.episodeId = "Episode".id ORDER BY a.n DESC LIMIT 1), 1));
