import type { AuditInput } from "@/lib/db/audit";
import type { Principal } from "@/lib/auth/principal";
import { threadControls } from "@/lib/db/sources";
import { transaction } from "@/lib/db/unit-of-work";
import { THREADS_PER_UNIT, withInternalEvents, type InternalEventOutcome } from "./pipeline";

export interface StopResult {
  key: number;
  threadId: string;
  status: string | null;
  /** `unreachable`: the thread's source cannot carry out an interrupt (lib/threads/control.ts); nothing was created. */
  result: "stopping" | "not-active" | "not-found" | "unreachable";
  detail: string | null;
}

/**
 * Stop retrying: the one code path behind the board's button, "Stop all matching" and
 * POST /api/v1/threads/{id}/stop. The engine decides (stopping + an interrupt directive, or a
 * note that nothing is active); every attempt is audited with who, when, why and the result.
 * Each stop commits together with its audit row; many threads go in bounded units of work of
 * THREADS_PER_UNIT, so no unit of work grows with the selection.
 */
/** What a bulk stop did, counted once for every bulk action. */
export function summarizeStops(results: StopResult[]): { stopping: number; skipped: number; notActive: number } {
  const count = (result: StopResult["result"]) => results.filter((r) => r.result === result).length;
  return { stopping: count("stopping"), skipped: count("unreachable"), notActive: count("not-active") + count("not-found") };
}

export async function stopThreads(keys: number[], principal: Pick<Principal, "actor">, reason: string, now = Date.now()): Promise<StopResult[]> {
  const results: StopResult[] = [];
  const action = keys.length > 1 ? "stop-all" : "stop";
  // No directive nobody can receive: such a thread would only turn broken for want of an answer.
  const controls = await threadControls(keys);
  const unreachable = keys.filter((key) => controls.get(key)?.interrupt === false);
  if (unreachable.length) {
    await transaction(async (tx) => {
      for (const key of unreachable) {
        const control = controls.get(key)!;
        const result: StopResult = { key, threadId: control.threadId, status: null, result: "unreachable", detail: control.why };
        results.push(result);
        await tx.insertAudit(auditEntry(result, principal, action, reason, now));
      }
    });
  }
  const skipped = new Set(unreachable);
  const reachable = keys.filter((key) => !skipped.has(key));
  for (let from = 0; from < reachable.length; from += THREADS_PER_UNIT) {
    const chunk = reachable.slice(from, from + THREADS_PER_UNIT);
    await withInternalEvents(
      now,
      async (apply) => {
        const applied: { key: number; outcome: InternalEventOutcome | null }[] = [];
        for (const key of chunk) applied.push({ key, outcome: await apply(key, { type: "stop.requested", actor: principal.actor, reason }) });
        return applied;
      },
      async (applied, tx) => {
        // After the unit of work finished: each result states the thread's saved status.
        for (const { key, outcome } of applied) {
          const result = stopResult(key, outcome);
          results.push(result);
          await tx.insertAudit(auditEntry(result, principal, action, reason, now));
        }
      },
    );
  }
  return results;
}

function stopResult(key: number, outcome: InternalEventOutcome | null): StopResult {
  if (!outcome) return { key, threadId: String(key), status: null, result: "not-found", detail: "No such thread." };
  const { state } = outcome;
  // A stop that cancels a scheduled recovery ends `stopped` at once: that is a stop too.
  const stopping = state.status === "stopping" || (state.status === "stopped" && outcome.before.status !== "stopped");
  const detail = stopping ? null : (outcome.applied?.note ?? `Thread is ${state.status ?? "unknown"}; nothing to stop.`);
  return { key, threadId: state.threadId, status: state.status ?? null, result: stopping ? "stopping" : "not-active", detail };
}

function auditEntry(result: StopResult, principal: Pick<Principal, "actor">, action: string, reason: string, now: number): AuditInput {
  return { at: now, actor: principal.actor, action, target: result.threadId, reason, result: result.result, detail: result.detail };
}
