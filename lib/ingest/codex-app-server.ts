/**
 * Codex app-server (JSON-RPC over stdio, as Codex writes it) → RadarEvents.
 *
 * Mapping (protocols.md; unknown methods are never rejected):
 * - `thread/started` → thread.started (thread.id; provider = thread.modelProvider; model;
 *   title = thread.name, else a non-empty preview; parentThreadId).
 * - `turn/started` → turn.started (turn.id).
 * - progress: item/started, item/completed, item/<kind>/<…Delta|delta>, item/mcpToolCall/progress,
 *   item/fileChange/patchUpdated, item/reasoning/summaryPartAdded, turn/plan/updated,
 *   turn/diff/updated, thread/tokenUsage/updated, thread/compacted → progress (count 1).
 *   An item whose type is `userMessage` is the user's input, not model progress → unknown.
 *   (`contextCompaction` items are ordinary items, hence progress.)
 * - `error` willRetry:true → retry; attempt/maxAttempts from "Reconnecting... n/m".
 *   `error` willRetry:false → retry with willRetry:false: the terminal notice carrying the
 *   final error. The following `turn/completed` status failed → turn.failed (same error) is
 *   what ends the turn; the reducer treats whichever comes second as late/redundant.
 *   Error fields: code = codexErrorInfo (string variant, or the object variant's name, the
 *   object kept in details.codexErrorInfo), httpStatus = <variant>.httpStatusCode when not
 *   null, message = error.message, details.additionalDetails = the provider's text (may hold
 *   "Please try again in 2s").
 * - `turn/completed`: completed → turn.completed, interrupted → turn.interrupted,
 *   failed → turn.failed with its error; any other status → unknown.
 * - `thread/status/changed` → unknown (informational) with awaitingUser = true when active with
 *   waitingOnApproval / waitingOnUserInput, false when active without them or idle.
 * - `account/rateLimits/updated` (account-wide, no threadId) → unknown on the batch's current
 *   thread (last thread seen in the batch, else ctx.threadId; skipped when none); when a window
 *   has a `resetsAt` (epoch seconds), error.details = {rateLimits: <snapshot as given>}.
 *   Each window also becomes a limit snapshot (limit-snapshots.ts), kept even with no thread.
 *   Codex sends it just before a usage-limit error, whose own text names the reset to the minute
 *   only ("try again at 9:29 AM"): a usageLimitExceeded error that follows in the batch carries
 *   the snapshot in error.details.rateLimits too (also when the notification, naming no thread,
 *   opened the batch), so its reset is known to the second.
 * - `turn/interrupt` (a client request a relay may forward) → interrupt.requested.
 * - JSON-RPC responses ({id, result|error}, no method) → skipped (event null): they answer the
 *   client's own requests and duplicate the notifications that follow. The answer to
 *   `account/rateLimits/read` (`result.rateLimits`) still yields its limit snapshots.
 * - Anything else → unknown with nativeType = method, on its threadId, else on the batch's
 *   current thread (last thread seen, or ctx.threadId); with no thread at all → skipped (null).
 * Event time: wrapped `at`, else top-level `emittedAtMs`, else receive time.
 */
import { parseReconnectNotice } from "../retry/notice";
import type { ErrorReport } from "../retry/types";
import { codexErrorInfoParts } from "./codex-error";
import { codexLimitSnapshots } from "./limit-snapshots";
import { runNative, type NativeAdapter, type NativeState, type StepResult } from "./native";
import type { BatchContext, BatchResult, NormalizedEvent } from "./types";
import { finiteNum, isObject, nonEmptyStr, str, type JsonObject } from "./util";

export const CODEX_AGENT = "codex";

interface ThreadMeta {
  provider: string | null;
  model: string | null;
  turnId: string | null;
}

interface CodexState extends NativeState {
  threads: Map<string, ThreadMeta>;
  /** The account's windows as the last `account/rateLimits/updated` of this batch gave them (with or without a thread). */
  rateLimits?: JsonObject;
}

const PROGRESS_METHODS = new Set([
  "item/started",
  "item/completed",
  "item/mcpToolCall/progress",
  "item/fileChange/patchUpdated",
  "item/reasoning/summaryPartAdded",
  "turn/plan/updated",
  "turn/diff/updated",
  "thread/tokenUsage/updated",
  "thread/compacted",
]);
const ITEM_DELTA = /^item\/[^/]+\/[A-Za-z]*[dD]elta$/;

export function isCodexProgressMethod(method: string): boolean {
  return PROGRESS_METHODS.has(method) || ITEM_DELTA.test(method);
}

/** A Codex TurnError → ErrorReport (see codex-error.ts for codexErrorInfo). */
export function codexTurnError(err: unknown): ErrorReport | null {
  if (!isObject(err)) return null;
  const parts = codexErrorInfoParts(err.codexErrorInfo);
  const details: JsonObject = { additionalDetails: str(err.additionalDetails) };
  if (parts.object) details.codexErrorInfo = parts.object;
  if (err.misalignment !== undefined && err.misalignment !== null) details.misalignment = err.misalignment;
  return { httpStatus: parts.httpStatus, code: parts.code, message: str(err.message), details };
}

function explicitThread(params: JsonObject): string | null {
  return nonEmptyStr(params.threadId) ?? (isObject(params.thread) ? nonEmptyStr(params.thread.id) : null);
}

function explicitTurn(params: JsonObject): string | null {
  return nonEmptyStr(params.turnId) ?? (isObject(params.turn) ? nonEmptyStr(params.turn.id) : null);
}

/**
 * The snapshot goes to error.details.rateLimits as given (the engine's advice parser reads each
 * window's `resetsAt`, epoch seconds, and ignores windows with usedPercent < 100). No error at
 * all when no window carries a reset time.
 */
function rateLimitDetails(params: JsonObject): ErrorReport | null {
  const limits = params.rateLimits;
  if (!isObject(limits)) return null;
  const hasReset = ["primary", "secondary"].some((name) => {
    const w = limits[name];
    return isObject(w) && finiteNum(w.resetsAt) !== null;
  });
  return hasReset ? { details: { rateLimits: limits } } : null;
}

/** A usage-limit error with the windows Codex reported just before it (see the header). */
function withWindows(error: ErrorReport | null, state: CodexState): ErrorReport | null {
  if (!error || error.code !== "usageLimitExceeded" || !state.rateLimits) return error;
  return { ...error, details: { ...(isObject(error.details) ? error.details : {}), rateLimits: state.rateLimits } };
}

const THREAD_BOUND = new Set(["thread/started", "turn/started", "turn/completed", "error", "turn/interrupt"]);

export const codexAppServerAdapter: NativeAdapter<CodexState> = {
  format: "codex",

  initialState(ctx: BatchContext): CodexState {
    const threads = new Map<string, ThreadMeta>();
    const threadId = ctx.threadId ?? null;
    if (threadId) threads.set(threadId, { provider: null, model: null, turnId: ctx.turnId ?? null });
    return { threadId, turnId: ctx.turnId ?? null, threads };
  },

  lineThread(msg, state) {
    const params = isObject(msg.params) ? msg.params : {};
    return explicitThread(params) ?? state.threadId;
  },

  nativeTime(msg) {
    return msg.emittedAtMs;
  },

  step({ msg, at }, state): StepResult {
    const method = str(msg.method);
    const params = isObject(msg.params) ? msg.params : {};

    if (method === null && "id" in msg && ("result" in msg || "error" in msg)) {
      const limits = isObject(msg.result) ? codexLimitSnapshots(msg.result.rateLimits, at, null) : [];
      return { event: null, nativeType: "response", limits };
    }

    // Account-wide: remembered for a usage-limit error that follows, even when no thread is known yet.
    if (method === "account/rateLimits/updated" && rateLimitDetails(params)) state.rateLimits = params.rateLimits as JsonObject;

    const ownThread = explicitThread(params);
    const threadId = ownThread ?? state.threadId;
    if (!threadId) {
      if (method !== null && (THREAD_BOUND.has(method) || isCodexProgressMethod(method))) {
        return { error: `params.threadId: required for ${method} (no thread known in this batch)` };
      }
      const limits = method === "account/rateLimits/updated" ? codexLimitSnapshots(params.rateLimits, at, null) : [];
      return { event: null, nativeType: method, limits };
    }
    const meta: ThreadMeta = state.threads.get(threadId) ?? { provider: null, model: null, turnId: null };
    state.threads.set(threadId, meta);
    const ownTurn = explicitTurn(params);
    if (ownTurn) meta.turnId = ownTurn;
    // Only lines that name their thread move the batch's "current thread".
    if (ownThread) {
      state.threadId = ownThread;
      state.turnId = meta.turnId;
    } else if (ownTurn && threadId === state.threadId) {
      state.turnId = ownTurn;
    }

    const base = (type: NormalizedEvent["type"]): NormalizedEvent => {
      const e: NormalizedEvent = { type, at, threadId, turnId: ownTurn ?? meta.turnId, agent: CODEX_AGENT };
      if (meta.provider) e.provider = meta.provider;
      if (meta.model) e.model = meta.model;
      return e;
    };
    const unknown = (): StepResult => ({ event: base("unknown"), nativeType: method });

    if (method === null) return unknown();

    switch (method) {
      case "thread/started": {
        const thread = isObject(params.thread) ? params.thread : {};
        meta.provider = nonEmptyStr(thread.modelProvider) ?? nonEmptyStr(params.modelProvider) ?? meta.provider;
        meta.model = nonEmptyStr(thread.model) ?? nonEmptyStr(params.model) ?? meta.model;
        const e = base("thread.started");
        e.turnId = null;
        const title = nonEmptyStr(thread.name) ?? nonEmptyStr(thread.preview);
        if (title) e.title = title.slice(0, 200);
        const parent = nonEmptyStr(thread.parentThreadId) ?? nonEmptyStr(params.parentThreadId);
        if (parent) e.parentThreadId = parent;
        return { event: e, nativeType: method };
      }
      case "turn/started":
        return { event: base("turn.started"), nativeType: method };
      case "turn/completed": {
        const turn = isObject(params.turn) ? params.turn : {};
        const status = str(turn.status);
        if (status === "completed") return { event: base("turn.completed"), nativeType: method };
        if (status === "interrupted") return { event: base("turn.interrupted"), nativeType: method };
        if (status === "failed") {
          const e = base("turn.failed");
          e.error = withWindows(codexTurnError(turn.error), state);
          return { event: e, nativeType: method };
        }
        return unknown();
      }
      case "error": {
        const error = withWindows(codexTurnError(params.error), state);
        const message = error?.message ?? null;
        const notice = parseReconnectNotice(message);
        const willRetry = typeof params.willRetry === "boolean" ? params.willRetry : notice !== null;
        const e = base("retry");
        e.willRetry = willRetry;
        if (notice) {
          e.attempt = notice.attempt;
          e.maxAttempts = notice.maxAttempts;
        }
        e.error = error;
        return { event: e, nativeType: method };
      }
      case "thread/status/changed": {
        const e = base("unknown");
        e.turnId = meta.turnId;
        const status = isObject(params.status) ? params.status : {};
        if (status.type === "active") {
          const flags = Array.isArray(status.activeFlags) ? status.activeFlags : [];
          e.awaitingUser = flags.includes("waitingOnApproval") || flags.includes("waitingOnUserInput");
        } else if (status.type === "idle") {
          e.awaitingUser = false;
        }
        return { event: e, nativeType: method };
      }
      case "account/rateLimits/updated": {
        const e = base("unknown");
        const err = rateLimitDetails(params);
        if (err) e.error = err;
        return { event: e, nativeType: method, limits: codexLimitSnapshots(params.rateLimits, at, threadId) };
      }
      case "thread/name/updated": {
        const e = base("unknown");
        const title = nonEmptyStr(params.threadName) ?? nonEmptyStr(params.name);
        if (title) e.title = title.slice(0, 200);
        return { event: e, nativeType: method };
      }
      case "turn/interrupt":
        return { event: base("interrupt.requested"), nativeType: method };
    }

    if (isCodexProgressMethod(method)) {
      if (method === "item/started" || method === "item/completed") {
        const item = isObject(params.item) ? params.item : {};
        if (item.type === "userMessage") return unknown();
      }
      const e = base("progress");
      e.progressCount = 1;
      e.lastAt = at;
      return { event: e, nativeType: method };
    }
    return unknown();
  },
};

/** Normalize a batch of Codex app-server wire messages (each optionally `{at, message}`-wrapped). */
export function normalizeCodexAppServer(items: unknown[], ctx: BatchContext): BatchResult {
  return runNative(codexAppServerAdapter, items, ctx);
}
