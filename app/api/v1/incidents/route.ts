import { z } from "zod";
import { listIncidents } from "@/lib/db/incidents";
import { route } from "@/lib/server/route";
import { INCIDENT_STATE_FILTERS } from "@/lib/wire/types";

export const dynamic = "force-dynamic";

/** Open incidents first, then past ones (`?state=open|closed`); fields: IncidentView in lib/wire/types.ts. */
export const GET = route(
  {
    access: "viewer",
    query: { schema: z.object({ state: z.enum(INCIDENT_STATE_FILTERS).default("all") }), title: "Bad filter", detail: `state must be one of ${INCIDENT_STATE_FILTERS.join(", ")}.` },
  },
  async ({ query, now }) => Response.json(await listIncidents(query.state, now)),
);
