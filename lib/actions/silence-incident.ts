"use server";

import { z } from "zod";
import { silenceIncident as silence } from "@/lib/db/alerts";
import { publishIncidentsChanged } from "@/lib/server/bus";
import { action } from "./safe-action";

/** Silences an incident's alerts for a while (0 minutes lifts the silence). */
export const silenceIncident = action(
  { name: "incident.silence", input: z.object({ incidentId: z.string().min(1).max(100), minutes: z.number().int().min(0).max(7 * 24 * 60) }) },
  async ({ incidentId, minutes }, { now }) => {
    if (!(await silence(incidentId, minutes, now))) return { ok: false, error: `No incident ${incidentId}.` };
    publishIncidentsChanged(now);
    return { ok: true };
  },
  ({ incidentId, minutes }, outcome) => ({ target: incidentId, result: outcome.ok ? (minutes ? "silenced" : "unsilenced") : "not-found", detail: minutes ? `${minutes} min` : null }),
);
