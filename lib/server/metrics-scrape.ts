import type { ExposedCounters, InstanceState, MetricsExposition } from "@/lib/insights/metrics";
import { read } from "./off-thread";
import { leadsWatchdog } from "./watchdog";
import { shared } from "@/lib/process-state";

// The counters' values exposed so far (lib/insights/metrics.ts renderMetrics), kept on the
// serving thread and handed to every scrape: a read worker started again goes on from them.
const sharedForMetrics = shared<{ metricsExposed?: ExposedCounters }>("metricsExposed", () => ({}));

/** Renders a scrape's text where the metrics are read: lib/db/reads.ts's `metricsExposition`, on the read worker on SQLite. */
export type RenderMetrics = (now: number, instance: InstanceState, exposedBefore: ExposedCounters | null) => Promise<MetricsExposition>;

const onReadWorker: RenderMetrics = (now, instance, exposedBefore) => read("metricsExposition", now, instance, exposedBefore);

/**
 * GET /api/metrics's text: this instance's own state (whether it leads the watchdog) goes with the
 * request, the counters' values come back.
 */
export async function scrapeMetrics(now: number, render: RenderMetrics = onReadWorker): Promise<MetricsExposition> {
  const instance: InstanceState = { watchdogLeader: leadsWatchdog() };
  const exposition = await render(now, instance, sharedForMetrics.metricsExposed ?? null);
  sharedForMetrics.metricsExposed = exposition.exposed;
  return exposition;
}
