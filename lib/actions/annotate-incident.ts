"use server";

import { z } from "zod";
import { annotateIncident as annotate } from "@/lib/db/incidents";
import { publishIncidentsChanged } from "@/lib/server/bus";
import { action } from "./safe-action";

/** A note in an incident's timeline ("failed over to gpt-5.4", "provider confirmed"). */
export const annotateIncident = action(
  { name: "incident.annotate", input: z.object({ incidentId: z.string().min(1).max(100), text: z.string().trim().min(1).max(2000) }) },
  async ({ incidentId, text }, { principal, now }) => {
    if (!(await annotate(incidentId, principal.actor, text, now))) return { ok: false, error: `No incident ${incidentId}.` };
    publishIncidentsChanged(now);
    return { ok: true };
  },
  ({ incidentId, text }, outcome) => ({ target: incidentId, result: outcome.ok ? "noted" : "not-found", detail: text }),
);
