import type { Principal } from "@/lib/auth/principal";
import type { Tx } from "@/lib/db/unit-of-work";
import { touchThreads, withInternalEvents } from "./pipeline";

/**
 * Archive and snooze: the one code path behind the thread page's controls and their API twins.
 * Archive hides a thread from the board until unarchived; snooze hides it until a time. Both
 * cancel a pending capacity recovery or resume at reset (a `thread.archived` event: the engine
 * decides); undoing them changes only the board. Every change is audited.
 */
export type VisibilityChange = { archive: boolean } | { snoozeUntil: number | null };

export interface VisibilityResult {
  key: number;
  threadId: string;
  status: string | null;
  result: "archived" | "unarchived" | "snoozed" | "unsnoozed" | "not-found";
  detail: string | null;
}

export async function changeVisibility(key: number, change: VisibilityChange, principal: Pick<Principal, "actor">, now = Date.now()): Promise<VisibilityResult> {
  const hides = "archive" in change ? change.archive : change.snoozeUntil !== null;
  const action = "archive" in change ? (change.archive ? "archive" : "unarchive") : change.snoozeUntil !== null ? "snooze" : "unsnooze";
  const audit = async (result: VisibilityResult, tx: Tx) => {
    await tx.insertAudit({ at: now, actor: principal.actor, action, target: result.threadId, result: result.result, detail: result.detail });
  };
  const store = (tx: Tx) =>
    "archive" in change ? tx.setArchived(key, change.archive ? now : null) : tx.setSnoozed(key, change.snoozeUntil);
  const until = "snoozeUntil" in change && change.snoozeUntil !== null ? new Date(change.snoozeUntil).toISOString() : null;

  if (hides) {
    return withInternalEvents(
      now,
      async (apply, tx): Promise<VisibilityResult> => {
        if (!(await tx.threadById(key))) return { key, threadId: String(key), status: null, result: "not-found", detail: "No such thread." };
        await store(tx);
        const outcome = await apply(key, { type: "thread.archived", actor: principal.actor, reason: action === "archive" ? "archived" : `snoozed until ${until}` });
        const note = outcome?.applied?.note ?? null;
        return { key, threadId: outcome?.state.threadId ?? String(key), status: outcome?.state.status ?? null, result: action === "archive" ? "archived" : "snoozed", detail: until ?? (note === "archived" ? null : note) };
      },
      audit,
    );
  }
  let result: VisibilityResult = { key, threadId: String(key), status: null, result: "not-found", detail: "No such thread." };
  await touchThreads([key], now, async (tx) => {
    const found = await tx.threadById(key);
    if (!found) return;
    await store(tx);
    result = { key, threadId: found.externalId, status: found.state.status, result: action === "unarchive" ? "unarchived" : "unsnoozed", detail: null };
    await audit(result, tx);
  });
  return result;
}
