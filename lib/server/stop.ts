import { recordAudit } from "@/lib/db/audit";
import { storedThread } from "@/lib/db/thread-state";
import type { Operator } from "./auth";
import { applyInternalEvent } from "./pipeline";

export interface StopResult {
  key: number;
  threadId: string;
  status: string | null;
  result: "stopping" | "not-active" | "not-found";
  detail: string | null;
}

/**
 * Stop retrying: the one code path behind the board's button, "Stop all matching" and
 * POST /api/v1/threads/{id}/stop. The engine decides (stopping + an interrupt directive, or a
 * note that nothing is active); every attempt is audited with who, when, why and the result.
 */
export async function stopThreads(keys: number[], operator: Operator, reason: string, now = Date.now()): Promise<StopResult[]> {
  const results: StopResult[] = [];
  for (const key of keys) {
    const before = await storedThread(key);
    if (!before) {
      results.push({ key, threadId: String(key), status: null, result: "not-found", detail: "No such thread." });
      continue;
    }
    const outcome = await applyInternalEvent(key, { type: "stop.requested", actor: operator.name, reason }, now);
    const state = outcome?.state;
    // A stop that cancels a scheduled recovery ends `stopped` at once: that is a stop too.
    const stopping = state?.status === "stopping" || (state?.status === "stopped" && before.state.status !== "stopped");
    const detail = stopping ? null : (outcome?.applied?.note ?? `Thread is ${state?.status ?? "unknown"}; nothing to stop.`);
    results.push({ key, threadId: before.externalId, status: state?.status ?? null, result: stopping ? "stopping" : "not-active", detail });
  }
  await recordAudit(
    results.map((result) => ({
      at: now,
      actor: operator.name,
      action: keys.length > 1 ? "stop-all" : "stop",
      target: result.threadId,
      reason,
      result: result.result,
      detail: result.detail,
    })),
  );
  return results;
}
