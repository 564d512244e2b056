import { z } from "zod";
import { recordAudit } from "@/lib/db/audit";
import { silenceIncident } from "@/lib/db/alerts";
import { isoOrNull } from "@/lib/db/statement";
import { publishIncidentsChanged } from "@/lib/server/bus";
import { MAX_COMMAND_BYTES, problem } from "@/lib/server/http";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** The API twin of Silence on an incident: its alerts are not sent for `minutes` (0 lifts it). */
export const POST = route(
  {
    access: "operator",
    body: { schema: z.object({ minutes: z.number().int().min(0).max(7 * 24 * 60) }), maxBytes: MAX_COMMAND_BYTES, title: "Invalid silence", example: '{"minutes": 60}' },
  },
  async ({ principal, params, body, now }) => {
    const found = await silenceIncident(params.id, body.minutes, now);
    await recordAudit({ at: now, actor: principal.actor, action: "incident.silence", target: params.id, result: found ? (body.minutes ? "silenced" : "unsilenced") : "not-found", detail: body.minutes ? `${body.minutes} min` : null });
    if (!found) return problem(404, "Not found", `No incident "${params.id}".`);
    publishIncidentsChanged(now);
    return Response.json({ silencedUntil: isoOrNull(found.until) });
  },
);
