import { recordAudit } from "@/lib/db/audit";
import { addRule, RULE_INPUT } from "@/lib/server/alerts-admin";
import { MAX_COMMAND_BYTES, problem } from "@/lib/server/http";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** The API twin of "Add rule": an alert event (lib/alerts/rules.ts ALERT_EVENTS) sent to a destination. */
export const POST = route(
  {
    access: "admin",
    body: { schema: RULE_INPUT, maxBytes: MAX_COMMAND_BYTES, title: "Invalid rule", example: '{"destinationId": "…", "event": "incident.opened", "threshold": 90}' },
  },
  async ({ principal, body, now }) => {
    const saved = await addRule(body, principal.actor, now);
    await recordAudit({ at: now, actor: principal.actor, action: "alert.rule.create", target: body.event, result: saved.ok ? "ok" : "refused", detail: body.destinationId });
    if (!saved.ok) return problem(404, "Not found", saved.error);
    return Response.json({ id: saved.id }, { status: 201 });
  },
);
