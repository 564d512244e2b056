/**
 * The OpenTelemetry settings that point each agent at this server, as the Sources page shows
 * them (the same ones README "Point your agents' OpenTelemetry at the radar" gives). The ingest
 * token is never retrievable: the settings name a placeholder for it.
 */
export const TOKEN_PLACEHOLDER = "<this source's ingest token>";

/** Claude Code: environment variables; the exporter appends /v1/logs (and /v1/traces) itself. */
export function claudeCodeSettings(endpoint: string): string {
  return [
    "CLAUDE_CODE_ENABLE_TELEMETRY=1",
    "OTEL_LOGS_EXPORTER=otlp",
    "OTEL_EXPORTER_OTLP_PROTOCOL=http/json",
    `OTEL_EXPORTER_OTLP_ENDPOINT=${endpoint}`,
    `OTEL_EXPORTER_OTLP_HEADERS="Authorization=Bearer ${TOKEN_PLACEHOLDER}"`,
    "# per-attempt detail (retry gaps) comes with traces, a beta of Claude Code:",
    "OTEL_TRACES_EXPORTER=otlp",
    "CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1",
  ].join("\n");
}

/** Codex: the `[otel]` table of ~/.codex/config.toml; each signal needs its full URL. */
export function codexSettings(endpoint: string): string {
  const exporter = (signal: string) =>
    `{ otlp-http = { endpoint = "${endpoint}/v1/${signal}", protocol = "json", headers = { "Authorization" = "Bearer ${TOKEN_PLACEHOLDER}" } } }`;
  return ["[otel]", `exporter = ${exporter("logs")}`, `trace_exporter = ${exporter("traces")}`, `metrics_exporter = ${exporter("metrics")}`].join("\n");
}
