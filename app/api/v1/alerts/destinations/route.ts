import { recordAudit } from "@/lib/db/audit";
import { addDestination, DESTINATION_INPUT } from "@/lib/server/alerts-admin";
import { MAX_COMMAND_BYTES, problem } from "@/lib/server/http";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** The API twin of "Add destination": 201 with the signing secret (shown this once), or 422 when its address is refused. */
export const POST = route(
  {
    access: "admin",
    body: { schema: DESTINATION_INPUT, maxBytes: MAX_COMMAND_BYTES, title: "Invalid destination", example: '{"name": "…", "url": "https://…", "format": "json" | "slack"}' },
  },
  async ({ principal, body, now }) => {
    const saved = await addDestination(body, principal.actor, now);
    await recordAudit({ at: now, actor: principal.actor, action: "alert.destination.create", target: body.name, result: saved.ok ? "ok" : "refused", detail: saved.ok ? `${body.format} ${body.url}` : saved.error });
    if (!saved.ok) return problem(422, "Destination refused", saved.error);
    return Response.json({ id: saved.id, secret: saved.secret }, { status: 201 });
  },
);
