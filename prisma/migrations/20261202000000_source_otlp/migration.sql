-- When each source last sent OpenTelemetry (POST /v1/logs, /v1/traces, /v1/metrics): the Sources
-- page says whether its exporters arrive.
ALTER TABLE "Source" ADD COLUMN "lastOtlpAt" DATETIME;
