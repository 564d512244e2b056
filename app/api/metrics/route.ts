import { scrapeMetrics } from "@/lib/server/metrics-scrape";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/**
 * Prometheus text exposition: retry notices, episodes, directives, threads, advised delays and
 * gaps, and whether this instance leads the watchdog. Every scrape reads a fresh snapshot from the
 * database (see lib/insights/metrics.ts), so the numbers survive restarts and agree across
 * instances sharing the database; on SQLite it is read and rendered on the read worker
 * (lib/server/metrics-scrape.ts), off the thread that ingests.
 */
export const GET = route({ access: "viewer" }, async ({ now }) => {
  const { text, contentType } = await scrapeMetrics(now);
  return new Response(text, { headers: { "content-type": contentType, "cache-control": "no-store" } });
});
