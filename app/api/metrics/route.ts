import { walCheckpoints } from "@/lib/db/client";
import { currentStore } from "@/lib/db/store";
import { createMetricsRegistry } from "@/lib/insights/metrics";
import { read } from "@/lib/server/off-thread";
import { route } from "@/lib/server/route";
import { leadsWatchdog } from "@/lib/server/watchdog";

export const dynamic = "force-dynamic";

// One registry per process (kept on globalThis across dev reloads). It holds no counts of its
// own: every scrape reads a fresh snapshot from the database (see lib/insights/metrics.ts), so
// the numbers survive restarts and agree across instances sharing the database. The read runs on
// the read worker (lib/server/off-thread.ts), off the thread that ingests.
const globalForMetrics = globalThis as unknown as { __radarMetrics?: ReturnType<typeof createMetricsRegistry> };

/** Prometheus text exposition: retry notices, episodes, directives, threads, advised delays and gaps, and whether this instance leads the watchdog. */
export const GET = route({ access: "viewer" }, async () => {
  globalForMetrics.__radarMetrics ??= createMetricsRegistry(() => read("metrics", Date.now()), {
    watchdogLeader: leadsWatchdog,
    ...(currentStore() === "sqlite" ? { walCheckpoints } : {}),
  });
  const metrics = globalForMetrics.__radarMetrics;
  return new Response(await metrics.scrape(), { headers: { "content-type": metrics.contentType, "cache-control": "no-store" } });
});
