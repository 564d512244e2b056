/**
 * Claude Code `--output-format stream-json --verbose` lines → RadarEvents.
 *
 * Thread = `session_id` (present on every line; a line without one uses the batch's current
 * thread, else it is rejected). Claude has no turn ids: `system/init` starts a turn whose id is
 * the init message's `uuid` (fallback: `claude-init-<16 hex of the line's idempotency key>`),
 * carried to the following lines of that session in the batch.
 * - system/init → turn.started (model = init.model).
 * - system/api_retry → retry: attempt, maxAttempts = max_retries, delayMs = retry_delay_ms
 *   (exact), error.httpStatus = error_status (may be null), error.code = error
 *   ("rate_limit", "overloaded").
 * - system/model_fallback → unknown (nativeType "system/model_fallback", model = fallback_model).
 * - system/compact_boundary → progress (compaction counts as progress).
 * - other system subtypes → unknown ("system/<subtype>").
 * - assistant with a real model, stream_event → progress.
 * - assistant with model "<synthetic>" and an "API Error…" text (or an `error` field) → the
 *   give-up notice: retry willRetry:false, error {message: text, code: the line's `error`}.
 *   Other synthetic messages → unknown.
 * - result: is_error (or an error_* subtype) → turn.failed {httpStatus: api_error_status,
 *   message: result}, or turn.interrupted when terminal_reason says the run was aborted
 *   (SIGINT); otherwise turn.completed.
 * - rate_limit_event → unknown, with its window as a limit snapshot (limit-snapshots.ts).
 * - user (tool results / user input) and anything else → unknown.
 * agent "claude-code", provider "anthropic".
 */
import { createHash } from "node:crypto";
import { claudeLimitSnapshots } from "./limit-snapshots";
import { runNative, type NativeAdapter, type NativeState, type StepResult } from "./native";
import type { BatchContext, BatchResult, NormalizedEvent } from "./types";
import { countOf, finiteNum, httpStatusOf, isObject, nonEmptyStr, str, type JsonObject } from "./util";

export const CLAUDE_AGENT = "claude-code";
export const CLAUDE_PROVIDER = "anthropic";
export const SYNTHETIC_MODEL = "<synthetic>";

interface ClaudeState extends NativeState {
  turns: Map<string, string | null>;
}

function contentText(message: JsonObject): string | null {
  const content = message.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return null;
  const texts = content.filter((c) => isObject(c) && typeof c.text === "string").map((c) => (c as JsonObject).text as string);
  return texts.length ? texts.join("\n") : null;
}

export const claudeAdapter: NativeAdapter<ClaudeState> = {
  format: "claude",

  initialState(ctx: BatchContext): ClaudeState {
    const threadId = ctx.threadId ?? null;
    const turns = new Map<string, string | null>();
    if (threadId) turns.set(threadId, ctx.turnId ?? null);
    return { threadId, turnId: ctx.turnId ?? null, turns };
  },

  lineThread(msg, state) {
    return nonEmptyStr(msg.session_id) ?? state.threadId;
  },

  step({ msg, at, key }, state): StepResult {
    const type = str(msg.type);
    const subtype = str(msg.subtype);
    const threadId = nonEmptyStr(msg.session_id) ?? state.threadId;
    if (!threadId) return { error: "session_id: required (no session known in this batch; pass ?threadId=)" };
    if (threadId !== state.threadId) {
      state.threadId = threadId;
      state.turnId = state.turns.get(threadId) ?? null;
    }
    if (type === "system" && subtype === "init") {
      state.turnId = nonEmptyStr(msg.uuid) ?? `claude-init-${createHash("sha256").update(key).digest("hex").slice(0, 16)}`;
      state.turns.set(threadId, state.turnId);
    }
    const base = (t: NormalizedEvent["type"]): NormalizedEvent => ({
      type: t,
      at,
      threadId,
      turnId: state.turnId,
      agent: CLAUDE_AGENT,
      provider: CLAUDE_PROVIDER,
    });
    const progress = (): NormalizedEvent => ({ ...base("progress"), progressCount: 1, lastAt: at });
    const nativeType = type === "system" ? `system/${subtype ?? ""}` : type;

    switch (type) {
      case "system":
        switch (subtype) {
          case "init": {
            const e = base("turn.started");
            const model = nonEmptyStr(msg.model);
            if (model) e.model = model;
            return { event: e, nativeType };
          }
          case "api_retry": {
            const e = base("retry");
            e.willRetry = true;
            e.attempt = countOf(msg.attempt);
            const max = countOf(msg.max_retries);
            e.maxAttempts = max !== null && max >= 1 ? max : null;
            const delay = finiteNum(msg.retry_delay_ms);
            e.delayMs = delay !== null && delay >= 0 ? delay : null;
            e.error = { httpStatus: httpStatusOf(msg.error_status), code: str(msg.error) };
            return { event: e, nativeType };
          }
          case "model_fallback": {
            const e = base("unknown");
            const model = nonEmptyStr(msg.fallback_model);
            if (model) e.model = model;
            return { event: e, nativeType };
          }
          case "compact_boundary":
            return { event: progress(), nativeType };
        }
        return { event: base("unknown"), nativeType };
      case "assistant": {
        const message = isObject(msg.message) ? msg.message : {};
        if (message.model === SYNTHETIC_MODEL) {
          const text = contentText(message);
          const code = str(msg.error);
          if (code !== null || (text !== null && /^\s*API Error\b/i.test(text))) {
            const e = base("retry");
            e.willRetry = false;
            e.error = { message: text, code };
            return { event: e, nativeType };
          }
          return { event: base("unknown"), nativeType };
        }
        return { event: progress(), nativeType };
      }
      case "stream_event":
        return { event: progress(), nativeType };
      case "rate_limit_event":
        return { event: base("unknown"), nativeType, limits: claudeLimitSnapshots(msg.rate_limit_info, CLAUDE_PROVIDER, at, threadId) };
      case "result": {
        const failed = msg.is_error === true || (subtype !== null && subtype.startsWith("error"));
        if (!failed) return { event: base("turn.completed"), nativeType };
        // SIGINT (the relay carrying out an interrupt) ends the run this way: an interruption, not a failure.
        if (str(msg.terminal_reason)?.startsWith("aborted")) return { event: base("turn.interrupted"), nativeType };
        const e = base("turn.failed");
        const errors = Array.isArray(msg.errors) ? msg.errors.filter((x) => typeof x === "string").join("; ") : "";
        e.error = {
          httpStatus: httpStatusOf(msg.api_error_status),
          message: str(msg.result) ?? (errors || null),
          details: { subtype, terminal_reason: msg.terminal_reason ?? null, stop_reason: msg.stop_reason ?? null },
        };
        return { event: e, nativeType };
      }
    }
    return { event: base("unknown"), nativeType };
  },
};

/** Normalize a batch of Claude Code stream-json lines (each optionally `{at, message}`-wrapped). */
export function normalizeClaude(items: unknown[], ctx: BatchContext): BatchResult {
  return runNative(claudeAdapter, items, ctx);
}
