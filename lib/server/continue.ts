import type { AuditInput } from "@/lib/db/audit";
import type { Principal } from "@/lib/auth/principal";
import { threadControls } from "@/lib/db/sources";
import { canResumeNow, canRetryNow } from "@/lib/threads/control";
import { viewStatus } from "@/lib/retry";
import { withInternalEvents } from "./pipeline";

/**
 * Resume now and Retry now: the one code path behind the thread page's buttons and their API
 * twins (POST /api/v1/threads/{id}/resume, …/retry). The engine decides (a `continue`, or an
 * interrupt then a `continue`); every attempt is audited with who, when, why and the result.
 */
export type ContinueAction = "resume" | "retry-now";

export interface ContinueResult {
  key: number;
  threadId: string;
  status: string | null;
  /**
   * `sent`: the directive was created. `unreachable`: the source cannot carry it out
   * (lib/threads/control.ts); `not-applicable`: the thread is in no state for it. Nothing is
   * created for either.
   */
  result: "sent" | "not-applicable" | "unreachable" | "not-found";
  detail: string | null;
}

const EVENT = { resume: "resume.requested", "retry-now": "retry.requested" } as const;
const DEFAULT_REASON = { resume: "Resume now", "retry-now": "Retry now" } as const;

export async function continueThread(action: ContinueAction, key: number, principal: Pick<Principal, "actor">, given: string | undefined, now = Date.now()): Promise<ContinueResult> {
  const reason = given || DEFAULT_REASON[action];
  const control = (await threadControls([key])).get(key);
  if (!control) return { key, threadId: String(key), status: null, result: "not-found", detail: "No such thread." };
  const allowed = action === "resume" ? canResumeNow : canRetryNow;
  return withInternalEvents(
    now,
    async (apply, tx): Promise<ContinueResult> => {
      const answer = (result: ContinueResult["result"], status: string | null, detail: string | null): ContinueResult => ({ key, threadId: control.threadId, status, result, detail });
      const before = (await tx.threadById(key))?.state;
      if (!before) return answer("not-found", null, "No such thread.");
      const status = viewStatus(before, now);
      // No directive nobody can receive (lib/threads/control.ts).
      const reachable = action === "resume" ? control.continue : control.interrupt && control.continue;
      if (!reachable) return answer("unreachable", status, control.why);
      if (!allowed(status, control)) return answer("not-applicable", status, `Thread is ${status}: nothing to ${action === "resume" ? "resume" : "retry now"}.`);
      const outcome = await apply(key, { type: EVENT[action], actor: principal.actor, reason });
      if (!outcome) return answer("not-found", null, "No such thread.");
      const sent = outcome.state.recovery !== outcome.before.recovery || outcome.state.interrupt !== outcome.before.interrupt;
      return answer(sent ? "sent" : "not-applicable", outcome.state.status, sent ? null : (outcome.applied?.note ?? null));
    },
    // Inside the same unit of work, after it finished: the audit row states the saved status.
    async (result, tx) => {
      await tx.insertAudit(auditEntry(action, result, principal, reason, now));
    },
  );
}

function auditEntry(action: ContinueAction, result: ContinueResult, principal: Pick<Principal, "actor">, reason: string, now: number): AuditInput {
  return { at: now, actor: principal.actor, action, target: result.threadId, reason, result: result.result, detail: result.detail };
}
