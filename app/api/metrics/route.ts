import { walCheckpoints } from "@/lib/db/client";
import { currentStore } from "@/lib/db/store";
import type { ExposedCounters, InstanceState } from "@/lib/insights/metrics";
import { read } from "@/lib/server/off-thread";
import { route } from "@/lib/server/route";
import { leadsWatchdog } from "@/lib/server/watchdog";

export const dynamic = "force-dynamic";

// The counters' values exposed so far (lib/insights/metrics.ts renderMetrics), kept here, on the
// serving thread, and handed to every scrape: a read worker started again goes on from them.
const globalForMetrics = globalThis as unknown as { __radarMetricsExposed?: ExposedCounters };

/**
 * Prometheus text exposition: retry notices, episodes, directives, threads, advised delays and
 * gaps, and whether this instance leads the watchdog. Every scrape reads a fresh snapshot from the
 * database (see lib/insights/metrics.ts), so the numbers survive restarts and agree across
 * instances sharing the database; on SQLite it is read and rendered on the read worker
 * (lib/server/off-thread.ts), off the thread that ingests.
 */
export const GET = route({ access: "viewer" }, async ({ now }) => {
  const instance: InstanceState = { watchdogLeader: leadsWatchdog(), ...(currentStore() === "sqlite" ? { walCheckpoints: walCheckpoints() } : {}) };
  const exposition = await read("metricsExposition", now, instance, globalForMetrics.__radarMetricsExposed ?? null);
  globalForMetrics.__radarMetricsExposed = exposition.exposed;
  return new Response(exposition.text, { headers: { "content-type": exposition.contentType, "cache-control": "no-store" } });
});
