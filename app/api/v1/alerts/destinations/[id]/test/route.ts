import { recordAudit } from "@/lib/db/audit";
import { sendTest } from "@/lib/server/alerts-admin";
import { problem } from "@/lib/server/http";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** The API twin of "Send test": 202 with the test alert's outbox id. */
export const POST = route({ access: "admin" }, async ({ principal, params, now }) => {
  const sent = await sendTest(params.id, now);
  await recordAudit({ at: now, actor: principal.actor, action: "alert.test", target: sent.ok ? sent.destination : params.id, result: sent.ok ? "queued" : "not-found", detail: sent.ok ? `alert #${sent.outboxId}` : null });
  if (!sent.ok) return problem(404, "Not found", sent.error);
  return Response.json({ outboxId: sent.outboxId }, { status: 202 });
});
