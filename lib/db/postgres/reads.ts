import type { InsightsQuery } from "@/lib/insights/range";
import { renderMetrics, type ExposedCounters, type InstanceState } from "@/lib/insights/metrics";
import { exportBodies } from "../records/exports";
import { pages } from "./exports";
import { insights } from "./insights";
import { metricsSnapshot } from "./metrics";
import { filterOptions, threadBoard } from "./threads";
import { listIncidents } from "./incidents-read";
import { listLimitWindows } from "./limits-read";
import type { IncidentStateFilter } from "@/lib/wire/types";
import type { ThreadFilter } from "../thread-filter";
import type { PageOptions } from "../records/threads";

/**
 * lib/db/reads.ts on PostgreSQL: the same reads and export bodies by name. They need no read
 * worker — the database does the work and the pool awaits it without holding the event loop —
 * so lib/server/off-thread.ts runs them where they are asked.
 */
export const READS = {
  insights: (query: InsightsQuery, now: number) => insights(query, now),
  metricsExposition: async (now: number, instance: InstanceState, exposedBefore: ExposedCounters | null) => renderMetrics(await metricsSnapshot(now), instance, exposedBefore),
  board: (filter: ThreadFilter, options: PageOptions, now: number) => threadBoard(filter, options, now),
  filterOptions: () => filterOptions(),
  incidents: (state: IncidentStateFilter, now: number) => listIncidents(state, now),
  limits: (now: number) => listLimitWindows(now),
};

export const EXPORTS = exportBodies(pages);
