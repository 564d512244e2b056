"use server";

import { z } from "zod";
import { acknowledgeIncident as acknowledge } from "@/lib/db/incidents";
import { publishIncidentsChanged } from "@/lib/server/bus";
import { action } from "./safe-action";

/** "I'm on it": the operator's name shows on the incident's banner and page. */
export const acknowledgeIncident = action(
  { name: "incident.acknowledge", input: z.object({ incidentId: z.string().min(1).max(100) }) },
  async ({ incidentId }, { principal, now }) => {
    if (!(await acknowledge(incidentId, principal.actor, now))) return { ok: false, error: `Incident ${incidentId} is not open.` };
    publishIncidentsChanged(now);
    return { ok: true };
  },
  ({ incidentId }, outcome) => ({ target: incidentId, result: outcome.ok ? "acknowledged" : "refused" }),
);
