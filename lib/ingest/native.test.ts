/** Native adapters on hand-written lines: the cases the captures do not show. */
import { describe, expect, it } from "vitest";
import { normalizeBatch } from "./batch";
import type { IngestFormat } from "./types";

const NOW = Date.UTC(2026, 10, 29, 17, 0, 0);
const T = "thr-1";
const U = "turn-1";
const run = (format: IngestFormat, items: unknown[], ctx: { threadId?: string; turnId?: string } = {}) =>
  normalizeBatch(format, items, { receivedAt: NOW, ...ctx });
const one = (format: IngestFormat, item: unknown, ctx: { threadId?: string; turnId?: string } = {}) => {
  const r = run(format, [item], ctx);
  expect(r.rejected).toEqual([]);
  return r.lines[0];
};

describe("codex app-server", () => {
  const err = (error: unknown, willRetry: boolean) => ({ method: "error", params: { error, willRetry, threadId: T, turnId: U } });

  it.each([
    ["string variant", "usageLimitExceeded", null, "usageLimitExceeded"],
    ["object variant with status", { responseTooManyFailedAttempts: { httpStatusCode: 429 } }, 429, "responseTooManyFailedAttempts"],
    ["object variant with null status", { httpConnectionFailed: { httpStatusCode: null } }, null, "httpConnectionFailed"],
    ["non-status object variant", { activeTurnNotSteerable: { turnKind: "review" } }, null, "activeTurnNotSteerable"],
    ["unknown future variant", "somethingNew", null, "somethingNew"],
    ["null", null, null, null],
  ])("codexErrorInfo %s", (_n, info, status, code) => {
    const l = one("codex", err({ message: "boom", codexErrorInfo: info, additionalDetails: "Please try again in 2s." }, false));
    expect(l.event).toMatchObject({ type: "retry", willRetry: false, threadId: T, turnId: U, agent: "codex" });
    expect(l.event!.error).toMatchObject({ httpStatus: status, code, message: "boom" });
    expect(l.event!.error!.details).toMatchObject({ additionalDetails: "Please try again in 2s." });
    if (info !== null && typeof info === "object") expect(l.event!.error!.details).toMatchObject({ codexErrorInfo: info });
  });

  it("willRetry true takes attempt n/m from the message", () => {
    const l = one("codex", err({ message: "Reconnecting... 3/5", codexErrorInfo: null, additionalDetails: null }, true));
    expect(l.event).toMatchObject({ type: "retry", willRetry: true, attempt: 3, maxAttempts: 5 });
  });

  it.each([
    ["completed", "turn.completed"],
    ["interrupted", "turn.interrupted"],
    ["failed", "turn.failed"],
    ["inProgress", "unknown"],
  ])("turn/completed status %s → %s", (status, type) => {
    const error = status === "failed" ? { message: "x", codexErrorInfo: "serverOverloaded", additionalDetails: null } : null;
    const l = one("codex", { method: "turn/completed", params: { threadId: T, turn: { id: U, status, error } } });
    expect(l.event).toMatchObject({ type, turnId: U });
    if (status === "failed") expect(l.event!.error).toMatchObject({ code: "serverOverloaded", message: "x" });
  });

  it.each([
    [["waitingOnApproval"], true],
    [["waitingOnUserInput"], true],
    [[], false],
  ])("thread/status/changed active %j → awaitingUser %s", (activeFlags, awaiting) => {
    const l = one("codex", { method: "thread/status/changed", params: { threadId: T, status: { type: "active", activeFlags } } });
    expect(l.event).toMatchObject({ type: "unknown", awaitingUser: awaiting });
  });

  it("systemError status is informational only", () => {
    const l = one("codex", { method: "thread/status/changed", params: { threadId: T, status: { type: "systemError" } } });
    expect(l.event!.type).toBe("unknown");
    expect(l.event!.awaitingUser).toBeUndefined();
  });

  it.each([
    "item/agentMessage/delta",
    "item/reasoning/summaryTextDelta",
    "item/reasoning/textDelta",
    "item/commandExecution/outputDelta",
    "item/plan/delta",
    "turn/plan/updated",
    "turn/diff/updated",
    "thread/tokenUsage/updated",
    "thread/compacted",
  ])("%s is progress", (method) => {
    const l = one("codex", { method, params: { threadId: T, turnId: U } });
    expect(l.event).toMatchObject({ type: "progress", progressCount: 1, lastAt: NOW, turnId: U });
  });

  it("a contextCompaction item is progress, a userMessage item is not", () => {
    const item = (type: string) => ({ method: "item/started", params: { threadId: T, turnId: U, item: { type, id: "i" } } });
    expect(one("codex", item("contextCompaction")).event!.type).toBe("progress");
    expect(one("codex", item("userMessage")).event!.type).toBe("unknown");
  });

  it("unknown methods are kept as unknown with their method, never rejected", () => {
    const r = run("codex", [
      { method: "model/rerouted", params: { threadId: T, turnId: U, fromModel: "a", toModel: "b" } },
      { method: "some/future/thing", params: { threadId: T, whatever: 1 } },
      { method: "warning", params: { message: "hi" } },
    ]);
    expect(r.rejected).toEqual([]);
    expect(r.lines.map((l) => [l.nativeType, l.event?.type, l.event?.threadId])).toEqual([
      ["model/rerouted", "unknown", T],
      ["some/future/thing", "unknown", T],
      ["warning", "unknown", T], // thread-less: attached to the batch's current thread
    ]);
  });

  it("thread-less notifications without any thread are skipped, not rejected", () => {
    const l = one("codex", { method: "remoteControl/status/changed", params: { status: "disabled" } });
    expect(l.event).toBeNull();
    expect(l.nativeType).toBe("remoteControl/status/changed");
  });

  it("thread-bound methods without a thread are rejected naming the field", () => {
    const r = run("codex", [{ method: "turn/started", params: { turn: { id: U } } }]);
    expect(r.rejected).toEqual([{ index: 0, error: "params.threadId: required for turn/started (no thread known in this batch)" }]);
  });

  it("ctx.threadId supplies the thread for thread-less lines", () => {
    const l = one("codex", { method: "account/rateLimits/updated", params: { rateLimits: { primary: null, secondary: null } } }, { threadId: T });
    expect(l.event).toMatchObject({ type: "unknown", threadId: T });
    expect(l.event!.error).toBeUndefined();
  });

  it("account/rateLimits/updated keeps resetsAt in error.details for the advice parser", () => {
    const rateLimits = { primary: { usedPercent: 100, windowDurationMins: 300, resetsAt: 1795975200 }, secondary: null };
    const r = run("codex", [{ method: "turn/started", params: { threadId: T, turn: { id: U } } }, { method: "account/rateLimits/updated", params: { rateLimits } }]);
    expect(r.lines[1].event).toMatchObject({ type: "unknown", threadId: T, turnId: U, error: { details: { rateLimits } } });
  });

  it("a usage-limit error after account/rateLimits/updated carries those windows (its text names the minute only)", () => {
    const rateLimits = { primary: { usedPercent: 100, windowDurationMins: 300, resetsAt: 1795975200 }, secondary: null };
    const error = { message: "You've hit your usage limit. … or try again at 9:29 AM.", codexErrorInfo: "usageLimitExceeded", additionalDetails: null };
    const other = { message: "boom", codexErrorInfo: "other", additionalDetails: null };
    // A batch of a relay starts with the notification, which names no thread.
    const r = run("codex", [
      { method: "account/rateLimits/updated", params: { rateLimits } },
      { method: "turn/started", params: { threadId: T, turn: { id: U } } },
      { method: "error", params: { threadId: T, turnId: U, willRetry: false, error } },
      { method: "turn/completed", params: { threadId: T, turn: { id: U, status: "failed", error } } },
      { method: "error", params: { threadId: T, turnId: U, willRetry: false, error: other } },
    ]);
    expect(r.lines[0].event).toBeNull();
    expect(r.lines[2].event).toMatchObject({ type: "retry", error: { code: "usageLimitExceeded", details: { rateLimits } } });
    expect(r.lines[3].event).toMatchObject({ type: "turn.failed", error: { code: "usageLimitExceeded", details: { rateLimits } } });
    expect(r.lines[4].event!.error!.details).not.toHaveProperty("rateLimits");
  });

  it("responses are skipped; a relayed turn/interrupt request is interrupt.requested", () => {
    const r = run("codex", [
      { id: 9, result: {} },
      { id: 10, error: { code: -32600, message: "bad" } },
      { method: "turn/interrupt", id: 11, params: { threadId: T, turnId: U } },
    ]);
    expect(r.lines.map((l) => [l.nativeType, l.event?.type ?? null])).toEqual([
      ["response", null],
      ["response", null],
      ["turn/interrupt", "interrupt.requested"],
    ]);
  });

  it("thread/started gives title and parent; provider/model follow the thread", () => {
    const r = run("codex", [
      { method: "thread/started", params: { thread: { id: "child", modelProvider: "openai", model: "gpt-5.5", preview: "fix tests", parentThreadId: "parent" } } },
      { method: "turn/started", params: { threadId: "child", turn: { id: "u9" } } },
    ]);
    expect(r.lines[0].event).toMatchObject({ type: "thread.started", threadId: "child", provider: "openai", model: "gpt-5.5", title: "fix tests", parentThreadId: "parent" });
    expect(r.lines[1].event).toMatchObject({ type: "turn.started", provider: "openai", model: "gpt-5.5", turnId: "u9" });
    expect(r.context).toEqual({ threadId: "child", turnId: "u9" });
  });

  it("an implausible emittedAtMs falls back to the receive time", () => {
    const l = one("codex", { method: "turn/started", params: { threadId: T, turn: { id: U } }, emittedAtMs: 12 });
    expect(l.event!.at).toBe(NOW);
  });
});

describe("codex exec", () => {
  it("needs a thread: rejected without thread.started or ?threadId=", () => {
    const r = run("codex-exec", [{ type: "turn.started" }, { type: "error", message: "Reconnecting... 1/5 (429)" }]);
    expect(r.lines).toEqual([]);
    expect(r.rejected.map((x) => x.index)).toEqual([0, 1]);
    expect(r.rejected[0].error).toContain("no thread id");
    expect(r.rejected[0].error).toContain("?threadId=");
  });

  it("uses ctx thread and turn for lines of a later request", () => {
    const r = run("codex-exec", [{ type: "error", message: "Reconnecting... 2/5 (429 Too Many Requests)" }], { threadId: T, turnId: "exec-abc" });
    expect(r.lines[0].event).toMatchObject({ type: "retry", threadId: T, turnId: "exec-abc", attempt: 2, maxAttempts: 5, willRetry: true });
    expect(r.lines[0].event!.error).toEqual({ message: "Reconnecting... 2/5 (429 Too Many Requests)" });
  });

  it("item error: Reconnecting text is a retry, other text is unknown (not progress)", () => {
    const r = run(
      "codex-exec",
      [
        { type: "item.completed", item: { id: "e1", type: "error", message: "Reconnecting... 1/5 (stream disconnected)" } },
        { type: "item.completed", item: { id: "e2", type: "error", message: "model metadata not found" } },
        { type: "item.started", item: { id: "c1", type: "command_execution" } },
        { type: "item.updated", item: { id: "t1", type: "todo_list" } },
        { type: "something.new" },
      ],
      { threadId: T },
    );
    expect(r.lines.map((l) => [l.nativeType, l.event!.type])).toEqual([
      ["item.completed", "retry"],
      ["item.completed", "unknown"],
      ["item.started", "progress"],
      ["item.updated", "progress"],
      ["something.new", "unknown"],
    ]);
    expect(r.lines[1].event!.error).toEqual({ message: "model metadata not found" });
  });

  it("turn ids are synthesized per turn.started and change with the next one", () => {
    const r = run("codex-exec", [
      { at: NOW - 3000, message: { type: "thread.started", thread_id: T } },
      { at: NOW - 2000, message: { type: "turn.started" } },
      { at: NOW - 1500, message: { type: "turn.completed" } },
      { at: NOW - 1000, message: { type: "turn.started" } },
    ]);
    const [, a, b, c] = r.lines.map((l) => l.event!.turnId);
    expect(a).toMatch(/^exec-[0-9a-f]{16}$/);
    expect(b).toBe(a);
    expect(c).not.toBe(a);
    expect(r.context).toEqual({ threadId: T, turnId: c });
  });
});

describe("claude", () => {
  const S = "sess-1";
  it("model_fallback is unknown but shown, with the fallback model", () => {
    const l = one("claude", { type: "system", subtype: "model_fallback", trigger: "overloaded", original_model: "a", fallback_model: "b", session_id: S });
    expect(l.nativeType).toBe("system/model_fallback");
    expect(l.event).toMatchObject({ type: "unknown", model: "b", threadId: S, agent: "claude-code", provider: "anthropic" });
  });

  it("api_retry with a null error_status keeps the code", () => {
    const l = one("claude", { type: "system", subtype: "api_retry", attempt: 1, max_retries: 10, retry_delay_ms: 500, error_status: null, error: "overloaded", session_id: S });
    expect(l.event).toMatchObject({ type: "retry", attempt: 1, maxAttempts: 10, delayMs: 500, willRetry: true, error: { httpStatus: null, code: "overloaded" } });
  });

  it("synthetic messages: API Error is the give-up notice, others are unknown; real ones are progress", () => {
    const msg = (model: string, text: string, extra = {}) => ({ type: "assistant", message: { model, content: [{ type: "text", text }] }, session_id: S, ...extra });
    const r = run("claude", [
      msg("<synthetic>", "API Error: Request rejected (429) · rate limited"),
      msg("<synthetic>", "No response requested."),
      msg("claude-opus-4-8", "hello"),
      { type: "stream_event", event: { type: "content_block_delta" }, session_id: S },
      { type: "system", subtype: "compact_boundary", session_id: S },
      { type: "user", message: { role: "user", content: [] }, session_id: S },
    ]);
    expect(r.lines.map((l) => [l.nativeType, l.event!.type, l.event!.willRetry ?? null])).toEqual([
      ["assistant", "retry", false],
      ["assistant", "unknown", null],
      ["assistant", "progress", null],
      ["stream_event", "progress", null],
      ["system/compact_boundary", "progress", null],
      ["user", "unknown", null],
    ]);
    expect(r.lines[0].event!.error).toEqual({ message: "API Error: Request rejected (429) · rate limited", code: null });
  });

  it("result: error subtype without is_error still fails; success completes", () => {
    const r = run("claude", [
      { type: "result", subtype: "error_max_turns", is_error: false, errors: ["max turns"], session_id: S },
      { type: "result", subtype: "success", is_error: false, result: "ok", session_id: S },
    ]);
    expect(r.lines[0].event).toMatchObject({ type: "turn.failed", error: { httpStatus: null, message: "max turns" } });
    expect(r.lines[1].event!.type).toBe("turn.completed");
  });

  it("result: a run ended by SIGINT (terminal_reason aborted_*) is an interruption, not a failure", () => {
    const r = run("claude", [
      { type: "result", subtype: "error_during_execution", is_error: true, terminal_reason: "aborted_streaming", session_id: S },
    ]);
    expect(r.lines[0].event!.type).toBe("turn.interrupted");
  });

  it("init starts a turn whose id is the init uuid, carried per session", () => {
    const r = run("claude", [
      { type: "system", subtype: "init", model: "m", session_id: S, uuid: "u-1" },
      { type: "system", subtype: "init", model: "m", session_id: "sess-2", uuid: "u-2" },
      { type: "system", subtype: "api_retry", attempt: 1, max_retries: 10, retry_delay_ms: 1, error_status: 429, error: "rate_limit", session_id: S },
    ]);
    expect(r.lines.map((l) => [l.event!.threadId, l.event!.turnId])).toEqual([
      [S, "u-1"],
      ["sess-2", "u-2"],
      [S, "u-1"],
    ]);
  });

  it("an init without uuid gets a stable synthesized turn id", () => {
    const line = { type: "system", subtype: "init", model: "m", session_id: S };
    const a = one("claude", line).event!.turnId;
    expect(a).toMatch(/^claude-init-[0-9a-f]{16}$/);
    expect(one("claude", line).event!.turnId).toBe(a);
  });

  it("a line without session_id and no context is rejected", () => {
    const r = run("claude", [{ type: "assistant", message: { model: "m" } }]);
    expect(r.rejected).toEqual([{ index: 0, error: "session_id: required (no session known in this batch; pass ?threadId=)" }]);
  });
});

describe("wrapped lines {at, message}", () => {
  it.each([
    ["epoch ms", NOW - 60_000, NOW - 60_000],
    ["ISO", "2026-11-29T16:59:00.000Z", NOW - 60_000],
  ])("keep their at (%s) over emittedAtMs", (_n, at, expected) => {
    const l = one("codex", { at, message: { method: "turn/started", params: { threadId: T, turn: { id: U } }, emittedAtMs: NOW - 1 } });
    expect(l.event!.at).toBe(expected);
    expect(l.raw).toEqual({ at, message: { method: "turn/started", params: { threadId: T, turn: { id: U } }, emittedAtMs: NOW - 1 } });
  });

  it("a wrapper without at uses emittedAtMs, then the receive time", () => {
    expect(one("codex", { message: { method: "turn/started", params: { threadId: T, turn: { id: U } }, emittedAtMs: NOW - 7 } }).event!.at).toBe(NOW - 7);
    expect(one("claude", { message: { type: "result", subtype: "success", session_id: "s" } }).event!.at).toBe(NOW);
  });

  it("a bad wrapped at is rejected naming the field; a bad message too", () => {
    const r = run("codex-exec", [
      { at: "not a time", message: { type: "thread.started", thread_id: T } },
      { at: NOW + 3 * 86_400_000, message: { type: "turn.started" } },
      "just text",
      { at: NOW, message: { type: "turn.started" } },
    ], { threadId: T });
    expect(r.rejected.map((x) => [x.index, x.error.split(":")[0]])).toEqual([
      [0, "at"],
      [1, "at"],
      [2, "expected a JSON object"],
    ]);
    expect(r.lines.map((l) => l.index)).toEqual([3]);
  });

  it("a Claude line's own `message` field is not a wrapper", () => {
    const l = one("claude", { type: "assistant", message: { model: "claude-opus-4-8", content: [] }, session_id: "s" });
    expect(l.event!.type).toBe("progress");
  });

  it("the wrapped at is part of the key: same line at two times → two keys", () => {
    const line = { type: "turn.started" };
    const r = run("codex-exec", [{ at: NOW - 2, message: line }, { at: NOW - 1, message: line }], { threadId: T });
    expect(r.lines[0].idempotencyKey).not.toBe(r.lines[1].idempotencyKey);
    const again = run("codex-exec", [{ at: NOW - 1, message: line }], { threadId: T });
    expect(again.lines[0].idempotencyKey).toBe(r.lines[1].idempotencyKey);
  });

  it("a line's key starts with the time the line states, and stays the same when it is sent again later", () => {
    const digits = (ms: number) => ms.toString(36).padStart(9, "0");
    const line = { method: "turn/started", params: { threadId: T, turn: { id: U } }, emittedAtMs: NOW - 5_000 };
    const key = one("codex", line).idempotencyKey;
    expect(key).toMatch(new RegExp(`^codex@${digits(NOW - 5_000)}:[0-9a-f]{64}$`));
    expect(normalizeBatch("codex", [line], { receivedAt: NOW + 3_600_000 }).lines[0].idempotencyKey).toBe(key);
    // Two days ahead of its first receive time, the line's own time is not used for the event, but
    // its key keeps it: sent again once that time is plausible, it is the same line.
    const ahead = { ...line, emittedAtMs: NOW + 2 * 86_400_000 };
    const early = one("codex", ahead);
    expect(early.event!.at).toBe(NOW);
    expect(early.idempotencyKey).toMatch(new RegExp(`^codex@${digits(NOW + 2 * 86_400_000)}:`));
    expect(normalizeBatch("codex", [ahead], { receivedAt: NOW + 2 * 86_400_000 }).lines[0].idempotencyKey).toBe(early.idempotencyKey);
    // A line with no time of its own is keyed by its receive time (in its hash too).
    expect(one("codex-exec", { type: "turn.started" }, { threadId: T }).idempotencyKey).toMatch(new RegExp(`^codex-exec@${digits(NOW)}:`));
  });

  it("the same exec line in two threads gets two keys", () => {
    const a = run("codex-exec", [{ type: "turn.started" }], { threadId: "a" }).lines[0].idempotencyKey;
    const b = run("codex-exec", [{ type: "turn.started" }], { threadId: "b" }).lines[0].idempotencyKey;
    expect(a).not.toBe(b);
  });
});
