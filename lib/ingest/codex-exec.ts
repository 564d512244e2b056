/**
 * `codex exec --json` lines → RadarEvents.
 *
 * Only `thread.started` names the thread; every later line belongs to the batch's current
 * thread (from `thread.started` earlier in the batch, else ctx.threadId = `?threadId=`). A line
 * with no thread at all is rejected ("no thread id …").
 * - thread.started → thread.started; turn.started → turn.started with a synthesized turn id
 *   `exec-<first 16 hex of the line's idempotency key>` (exec has no turn ids; the key is
 *   stable across re-imports), carried to the following lines of the batch.
 * - item.started / item.updated / item.completed → progress, except items of type `error`
 *   (non-fatal error items): a "Reconnecting... n/m" text → retry like the top-level error,
 *   otherwise unknown (shown, with error.message).
 * - `{"type":"error","message":"Reconnecting... n/m (…)"}` → retry willRetry:true with
 *   attempt n / maxAttempts m, error.message = the whole text. An `error` without that prefix
 *   is Codex giving up → retry willRetry:false (terminal notice, like the app-server's
 *   `error` willRetry:false); the `turn.failed` that follows ends the turn.
 * - turn.completed → turn.completed; turn.failed → turn.failed {error.message}.
 * - a session file's `event_msg` `token_count` line (what `codex exec` records in
 *   `$CODEX_HOME/sessions`, where its rate limits are) → unknown with its limit snapshots.
 * - anything else → unknown with nativeType = type.
 * agent "codex-exec", provider "openai" (the CLI's default provider; exec --json does not say).
 */
import { createHash } from "node:crypto";
import { parseReconnectNotice } from "../retry/notice";
import { codexSessionLimitSnapshots } from "./limit-snapshots";
import { runNative, type NativeAdapter, type NativeState, type StepResult } from "./native";
import type { BatchContext, BatchResult, NormalizedEvent } from "./types";
import { isObject, nonEmptyStr, str } from "./util";

export const CODEX_EXEC_AGENT = "codex-exec";
export const CODEX_EXEC_PROVIDER = "openai";

/** Turn id synthesized for an exec `turn.started` line from its idempotency key. */
export function execTurnId(key: string): string {
  return `exec-${createHash("sha256").update(key).digest("hex").slice(0, 16)}`;
}

export const codexExecAdapter: NativeAdapter<NativeState> = {
  format: "codex-exec",

  initialState(ctx: BatchContext): NativeState {
    return { threadId: ctx.threadId ?? null, turnId: ctx.turnId ?? null };
  },

  lineThread(msg, state) {
    return (msg.type === "thread.started" ? nonEmptyStr(msg.thread_id) : null) ?? state.threadId;
  },

  step({ msg, at, key }, state): StepResult {
    const type = str(msg.type);
    if (type === "thread.started") {
      const id = nonEmptyStr(msg.thread_id);
      if (!id) return { error: "thread_id: required for thread.started" };
      if (id !== state.threadId) state.turnId = null;
      state.threadId = id;
    }
    const threadId = state.threadId;
    if (!threadId) {
      return { error: `no thread id: ${type ?? "this line"} carries none; send thread.started in the same batch or pass ?threadId=` };
    }
    if (type === "turn.started") state.turnId = execTurnId(key);

    const base = (t: NormalizedEvent["type"]): NormalizedEvent => ({
      type: t,
      at,
      threadId,
      turnId: t === "thread.started" ? null : state.turnId,
      agent: CODEX_EXEC_AGENT,
      provider: CODEX_EXEC_PROVIDER,
    });
    const retry = (message: string | null): NormalizedEvent => {
      const e = base("retry");
      const notice = parseReconnectNotice(message);
      e.willRetry = notice !== null;
      if (notice) {
        e.attempt = notice.attempt;
        e.maxAttempts = notice.maxAttempts;
      }
      e.error = { message };
      return e;
    };

    switch (type) {
      case "thread.started":
        return { event: base("thread.started"), nativeType: type };
      case "turn.started":
        return { event: base("turn.started"), nativeType: type };
      case "turn.completed":
        return { event: base("turn.completed"), nativeType: type };
      case "turn.failed": {
        const e = base("turn.failed");
        const err = isObject(msg.error) ? msg.error : {};
        e.error = { message: str(err.message) ?? str(msg.message) };
        return { event: e, nativeType: type };
      }
      case "error":
        return { event: retry(str(msg.message)), nativeType: type };
      case "item.started":
      case "item.updated":
      case "item.completed": {
        const item = isObject(msg.item) ? msg.item : {};
        if (item.type === "error") {
          const message = str(item.message);
          if (parseReconnectNotice(message)) return { event: retry(message), nativeType: type };
          const e = base("unknown");
          e.error = { message };
          return { event: e, nativeType: type };
        }
        const e = base("progress");
        e.progressCount = 1;
        e.lastAt = at;
        return { event: e, nativeType: type };
      }
    }
    return { event: base("unknown"), nativeType: type, limits: codexSessionLimitSnapshots(msg, at, threadId) };
  },
};

/** Normalize a batch of `codex exec --json` lines (each optionally `{at, message}`-wrapped). */
export function normalizeCodexExec(items: unknown[], ctx: BatchContext): BatchResult {
  return runNative(codexExecAdapter, items, ctx);
}
