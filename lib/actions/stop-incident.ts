"use server";

import { z } from "zod";
import { stoppableIncidentThreadKeys } from "@/lib/db/incidents";
import { stopThreads, summarizeStops } from "@/lib/server/stop";
import { action, fail } from "./safe-action";

/** "Stop all in this incident": stops exactly the incident's threads that are still active. */
export const stopIncident = action(
  {
    name: "incident.stop-all",
    input: z.object({
      incidentId: z.string().min(1).max(100),
      /** The count the operator confirmed; if the set changed since, nothing is stopped. */
      expected: z.number().int().min(0),
      reason: z.string().trim().max(500).optional(),
    }),
    resolve: async ({ incidentId }) => (await stoppableIncidentThreadKeys(incidentId)) ?? fail(`Incident ${incidentId} is not open.`),
  },
  async ({ incidentId, expected, reason }, { principal, resolved: keys, now }) => {
    if (keys.length !== expected) {
      return { ok: false, error: `The incident now has ${keys.length} stoppable threads, not ${expected}; review and confirm again.`, count: keys.length };
    }
    const results = await stopThreads(keys, principal, reason || `Stop all in incident ${incidentId}`, now);
    return { ok: true, ...summarizeStops(results) };
  },
  // Each thread's stop is audited too; this entry says they were one decision about one incident.
  ({ incidentId, reason }, outcome) => ({
    target: incidentId,
    reason: reason ?? null,
    result: outcome.ok ? "stopping" : "refused",
    detail: outcome.ok ? `${outcome.stopping} stopping, ${outcome.skipped} unreachable (no relay), ${outcome.notActive} no longer active` : outcome.error,
  }),
);
