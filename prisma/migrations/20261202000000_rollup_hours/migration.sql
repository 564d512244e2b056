-- Hour rollups (the same counters as "Rollup", per hour) for long ranges, the per-thread wait
-- fact (threadWait) for the top threads, and an index on the attempt's start for the waits a
-- range's horizon cuts. Filled here by a rebuild, as `npm run rollups -- rebuild` does.
CREATE TABLE "RollupHour" (
    "fact" TEXT NOT NULL,
    "hour" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "agent" TEXT NOT NULL,
    "sourceId" TEXT NOT NULL,
    "label" TEXT NOT NULL DEFAULT '',
    "n" INTEGER NOT NULL DEFAULT 0,
    "ms" INTEGER NOT NULL DEFAULT 0,
    "waited" INTEGER NOT NULL DEFAULT 0,
    "judged" INTEGER NOT NULL DEFAULT 0,
    "early" INTEGER NOT NULL DEFAULT 0,
    "earlyMs" INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY ("fact", "hour", "kind", "provider", "model", "agent", "sourceId", "label")
) WITHOUT ROWID;

CREATE INDEX "Attempt_startedAt_idx" ON "Attempt"("startedAt");

-- Backfill.
DELETE FROM "Rollup";
DELETE FROM "MetricTotal" WHERE fact <> 'noticeSeen';
INSERT INTO "Rollup" (fact, minute, kind, provider, model, agent, sourceId, label, n, ms, waited, judged, early, earlyMs) WITH a AS MATERIALIZED (
      SELECT ep.threadId, ep.kind, ep.endedAt, a.noticeAt, a.advisedDelayMs, a.earlyByMs, coalesce(a.startedAt,
  (SELECT min(b.noticeAt) FROM "Attempt" b WHERE b.episodeId = a.episodeId AND b.n > a.n)) AS retriedAt
      FROM "Attempt" a JOIN "Episode" ep ON ep.id = a.episodeId WHERE (1))
    SELECT f.fact, f.minute, f.kind, coalesce(t.provider, 'unknown') AS provider, coalesce(t.model, 'unknown') AS model,
      coalesce(t.agent, 'unknown') AS agent, t.sourceId, f.label,
      sum(f.n) AS n, sum(f.ms) AS ms, sum(f.waited) AS waited, sum(f.judged) AS judged, sum(f.early) AS early, sum(f.earlyMs) AS earlyMs
    FROM (SELECT threadId, 'attempt' AS fact, (noticeAt - noticeAt % 60000) AS minute, kind, '' AS label, count(*) AS n,
         coalesce(sum(max(0, coalesce(retriedAt, endedAt) - noticeAt)), 0) AS ms, count(coalesce(retriedAt, endedAt)) AS waited,
         sum(advisedDelayMs IS NOT NULL AND retriedAt IS NOT NULL) AS judged, sum(coalesce(earlyByMs, 0) > 0) AS early,
         coalesce(sum(CASE WHEN earlyByMs > 0 THEN earlyByMs END), 0) AS earlyMs
       FROM a GROUP BY 1, 2, 3, 4, 5
    UNION ALL SELECT threadId, 'threadWait', (noticeAt - noticeAt % 60000), kind, CAST(threadId AS TEXT), count(*),
         coalesce(sum(max(0, coalesce(retriedAt, endedAt) - noticeAt)), 0), count(coalesce(retriedAt, endedAt)),
         sum(advisedDelayMs IS NOT NULL AND retriedAt IS NOT NULL), sum(coalesce(earlyByMs, 0) > 0),
         coalesce(sum(CASE WHEN earlyByMs > 0 THEN earlyByMs END), 0)
       FROM a GROUP BY 1, 2, 3, 4, 5
    UNION ALL SELECT threadId, 'advised', (noticeAt - noticeAt % 60000), kind, CAST(CASE WHEN advisedDelayMs <= 100 THEN 0 WHEN advisedDelayMs <= 250 THEN 1 WHEN advisedDelayMs <= 500 THEN 2 WHEN advisedDelayMs <= 1000 THEN 3 WHEN advisedDelayMs <= 2000 THEN 4 WHEN advisedDelayMs <= 5000 THEN 5 WHEN advisedDelayMs <= 10000 THEN 6 WHEN advisedDelayMs <= 30000 THEN 7 WHEN advisedDelayMs <= 60000 THEN 8 WHEN advisedDelayMs <= 120000 THEN 9 WHEN advisedDelayMs <= 300000 THEN 10 WHEN advisedDelayMs <= 600000 THEN 11 WHEN advisedDelayMs <= 1800000 THEN 12 WHEN advisedDelayMs <= 3600000 THEN 13 ELSE 14 END AS TEXT), count(*), sum(advisedDelayMs), 0, 0, 0, 0
       FROM a WHERE advisedDelayMs IS NOT NULL GROUP BY 1, 2, 3, 4, 5
    UNION ALL SELECT threadId, 'actual', (noticeAt - noticeAt % 60000), kind, CAST(CASE WHEN max(0, retriedAt - noticeAt) <= 100 THEN 0 WHEN max(0, retriedAt - noticeAt) <= 250 THEN 1 WHEN max(0, retriedAt - noticeAt) <= 500 THEN 2 WHEN max(0, retriedAt - noticeAt) <= 1000 THEN 3 WHEN max(0, retriedAt - noticeAt) <= 2000 THEN 4 WHEN max(0, retriedAt - noticeAt) <= 5000 THEN 5 WHEN max(0, retriedAt - noticeAt) <= 10000 THEN 6 WHEN max(0, retriedAt - noticeAt) <= 30000 THEN 7 WHEN max(0, retriedAt - noticeAt) <= 60000 THEN 8 WHEN max(0, retriedAt - noticeAt) <= 120000 THEN 9 WHEN max(0, retriedAt - noticeAt) <= 300000 THEN 10 WHEN max(0, retriedAt - noticeAt) <= 600000 THEN 11 WHEN max(0, retriedAt - noticeAt) <= 1800000 THEN 12 WHEN max(0, retriedAt - noticeAt) <= 3600000 THEN 13 ELSE 14 END AS TEXT), count(*), sum(max(0, retriedAt - noticeAt)), 0, 0,
         sum(coalesce(earlyByMs, 0) > 0), 0
       FROM a WHERE retriedAt IS NOT NULL GROUP BY 1, 2, 3, 4, 5
    UNION ALL SELECT threadId, 'advisedRetried', (noticeAt - noticeAt % 60000), kind, CAST(CASE WHEN advisedDelayMs <= 100 THEN 0 WHEN advisedDelayMs <= 250 THEN 1 WHEN advisedDelayMs <= 500 THEN 2 WHEN advisedDelayMs <= 1000 THEN 3 WHEN advisedDelayMs <= 2000 THEN 4 WHEN advisedDelayMs <= 5000 THEN 5 WHEN advisedDelayMs <= 10000 THEN 6 WHEN advisedDelayMs <= 30000 THEN 7 WHEN advisedDelayMs <= 60000 THEN 8 WHEN advisedDelayMs <= 120000 THEN 9 WHEN advisedDelayMs <= 300000 THEN 10 WHEN advisedDelayMs <= 600000 THEN 11 WHEN advisedDelayMs <= 1800000 THEN 12 WHEN advisedDelayMs <= 3600000 THEN 13 ELSE 14 END AS TEXT), count(*), 0, 0, 0, 0, 0
       FROM a WHERE retriedAt IS NOT NULL AND advisedDelayMs IS NOT NULL GROUP BY 1, 2, 3, 4, 5
    UNION ALL SELECT ep.threadId, 'outcome', coalesce((ep.endedAt - ep.endedAt % 60000), -1), ep.kind, ep.outcome, count(*), 0, 0, 0, 0, 0
       FROM "Episode" ep WHERE (1) AND ep.outcome IS NOT NULL GROUP BY 1, 2, 3, 4, 5
    UNION ALL SELECT e.threadId, 'notice' AS fact, (e.at - e.at % 60000) AS minute, coalesce(e.kind, 'other') AS kind, '' AS label, count(*) AS n,
         0 AS ms, 0 AS waited, 0 AS judged, 0 AS early, 0 AS earlyMs
       FROM "Event" e WHERE e.type = 'retry' AND e.threadId IS NOT NULL AND (1) GROUP BY 1, 2, 3, 4, 5) f JOIN "Thread" t ON t.id = f.threadId
    GROUP BY 1, 2, 3, 4, 5, 6, 7, 8;
DELETE FROM "RollupHour";
INSERT INTO "RollupHour" (fact, hour, kind, provider, model, agent, sourceId, label, n, ms, waited, judged, early, earlyMs)
  SELECT fact, CASE WHEN minute < 0 THEN minute ELSE minute - minute % 3600000 END, kind, provider, model, agent, sourceId, label, sum(n), sum(ms), sum(waited), sum(judged), sum(early), sum(earlyMs)
  FROM "Rollup" GROUP BY 1, 2, 3, 4, 5, 6, 7, 8;
INSERT INTO "MetricTotal" (fact, kind, provider, model, agent, label, n, ms, waited, judged, early, earlyMs)
  SELECT fact, kind, provider, model, agent, label, sum(n), sum(ms), sum(waited), sum(judged), sum(early), sum(earlyMs) FROM "Rollup" WHERE fact NOT IN ('notice', 'threadWait') GROUP BY fact, kind, provider, model, agent, label;
INSERT INTO "MetricTotal" (fact, kind, provider, model, agent, label, n)
  SELECT 'noticeSeen', kind, provider, model, agent, '', sum(n) FROM "Rollup"
  WHERE fact = 'notice' AND NOT EXISTS (SELECT 1 FROM "MetricTotal" WHERE fact = 'noticeSeen') GROUP BY 2, 3, 4, 5;
