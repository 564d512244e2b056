import type { SourceOverview } from "@/lib/wire/types";
import { Timestamp } from "@/components/time/timestamp";
import { claudeCodeSettings, codexSettings } from "@/lib/ui/otlp-settings";

/** Copy-paste OpenTelemetry settings for a source, and whether its exports arrive. */
export function OtlpSettings({ source, endpoint }: { source: SourceOverview; endpoint: string }) {
  return (
    <details data-testid="otlp-settings" className="text-sm">
      <summary className="cursor-pointer font-semibold">
        OpenTelemetry —{" "}
        {source.lastOtlpAt ? (
          <span data-testid="otlp-last">last export <Timestamp iso={source.lastOtlpAt} /></span>
        ) : (
          <span data-testid="otlp-last">no export received yet</span>
        )}
      </summary>
      <div className="mt-2 space-y-3">
        <p className="text-slate-600">
          Point an agent&apos;s OpenTelemetry exporter at this server with JSON encoding; paste this source&apos;s ingest token where shown (it is
          shown once, when created). Stops need the relay: an agent reporting only by OpenTelemetry cannot be stopped from here.
        </p>
        <h4 className="font-medium">Claude Code (environment)</h4>
        <pre className="overflow-x-auto rounded bg-slate-100 p-2 font-mono text-xs">{claudeCodeSettings(endpoint)}</pre>
        <h4 className="font-medium">Codex (~/.codex/config.toml)</h4>
        <pre className="overflow-x-auto rounded bg-slate-100 p-2 font-mono text-xs">{codexSettings(endpoint)}</pre>
      </div>
    </details>
  );
}
