-- Incident thresholds per source: null is the global setting.
ALTER TABLE "Source" ADD COLUMN "incidentMinThreads" INTEGER;
ALTER TABLE "Source" ADD COLUMN "incidentWindowMs" INTEGER;
