/**
 * Limit snapshots from every adapter that sees them: the real captures of
 * fixtures/real-clients-2 (Claude Code signed in with OAuth, Codex app-server and its session
 * file) yield exactly these windows, percentages and reset times.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { normalizeBatch } from "./batch";
import { parseCapture } from "./capture";
import { replay } from "@/lib/retry";
import { headerLimitSnapshots, type LimitSnapshot } from "./limit-snapshots";
import type { BatchResult } from "./types";

const dir = path.resolve(import.meta.dirname, "fixtures", "real-clients-2");
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function capture(name: string): BatchResult {
  const parsed = parseCapture(readFileSync(path.join(dir, `${name}.jsonl`), "utf8"));
  return normalizeBatch(parsed.format, parsed.items, { receivedAt: Date.parse("2026-11-30T08:30:00Z") });
}

/** A Codex session file's lines as the relay would forward them (each with its own timestamp). */
function sessionFile(name: string): BatchResult {
  const items = readFileSync(path.join(dir, `${name}.jsonl`), "utf8")
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => {
      const message = JSON.parse(line);
      return { at: message.timestamp, message };
    });
  return normalizeBatch("codex-exec", items, { receivedAt: Date.parse("2026-11-30T08:30:00Z"), threadId: "exec-thread" });
}

type Row = [window: string, status: string, usedPercent: number | null, windowMinutes: number | null, resetAt: string | null, reachedType?: string | null];

const rows = (result: BatchResult): Row[] =>
  result.lines.flatMap((line) => line.limits ?? []).map((l: LimitSnapshot) => {
    const row: Row = [l.window, l.status, l.usedPercent, l.windowMinutes, iso(l.resetAt)];
    if (l.reachedType) row.push(l.reachedType);
    return row;
  });

describe("limit snapshots from the real captures", () => {
  it.each<[string, (name: string) => BatchResult, string, Row[]]>([
    ["claude-ratelimit-allowed-warning", capture, "anthropic", [["five_hour", "warning", 92, 300, "2026-11-30T12:28:00.000Z"]]],
    ["claude-ratelimit-rejected", capture, "anthropic", [["five_hour", "rejected", 100, 300, "2026-11-30T12:28:08.000Z"]]],
    [
      "codex-ratelimit-appserver-usage-limit",
      capture,
      "openai",
      [
        ["primary", "rejected", 100, 300, "2026-11-30T09:29:08.000Z", "rate_limit_reached"],
        ["secondary", "ok", 12, 10_080, "2026-12-04T23:35:48.000Z"],
      ],
    ],
    [
      "codex-ratelimit-appserver-ok",
      capture,
      "openai",
      [
        ["primary", "ok", 42, 300, "2026-11-30T09:28:42.000Z"],
        ["secondary", "ok", 12, 10_080, "2026-12-04T23:35:22.000Z"],
      ],
    ],
    [
      "codex-ratelimit-appserver-usage-limit.session",
      sessionFile,
      "openai",
      [
        ["primary", "rejected", 100, 300, "2026-11-30T09:29:08.000Z", "rate_limit_reached"],
        ["secondary", "ok", 12, 10_080, "2026-12-04T23:35:48.000Z"],
      ],
    ],
  ])("%s", (name, load, provider, expected) => {
    const result = load(name);
    expect(result.rejected).toEqual([]);
    expect(rows(result)).toEqual(expected);
    const limits = result.lines.flatMap((line) => line.limits ?? []);
    expect(limits.every((l) => l.provider === provider && l.threadId !== null)).toBe(true);
  });

  it("the Claude rejection's thread fails with the session-limit text", () => {
    const result = capture("claude-ratelimit-rejected");
    const failed = result.lines.find((line) => line.event?.type === "turn.failed");
    expect(failed?.event?.error?.message).toBe("You've hit your session limit · resets 12:28pm (UTC)");
    expect(result.lines.find((line) => line.limits)?.limits?.[0].threadId).toBe(failed?.event?.threadId);
  });

  it("the Claude rejection is a usage limit that waits for the window's reset, its text kept", () => {
    const events = capture("claude-ratelimit-rejected").lines.flatMap((line, seq) => (line.event ? [{ ...line.event, seq }] : []));
    const state = replay(events, Date.parse("2026-11-30T08:30:00Z"));
    expect(state.status).toBe("waiting_reset");
    expect(state.lastError).toMatchObject({ kind: "usage_limit", httpStatus: 429, message: "You've hit your session limit · resets 12:28pm (UTC)" });
    expect(iso(state.retry?.resetAt ?? null)).toBe("2026-11-30T12:28:00.000Z");
  });

  it("the Codex usage-limit refusal waits for the window's reset to the second, not the minute its text names", () => {
    const result = capture("codex-ratelimit-appserver-usage-limit");
    const failure = result.lines.find((line) => line.event?.type === "retry");
    expect(failure?.event?.error?.message).toMatch(/try again at 9:29 AM/);
    const events = result.lines.flatMap((line, seq) => (line.event ? [{ ...line.event, seq }] : []));
    const state = replay(events, Date.parse("2026-11-30T08:30:00Z"));
    expect(state.status).toBe("waiting_reset");
    expect(state.lastError).toMatchObject({ kind: "usage_limit", code: "usageLimitExceeded" });
    expect(iso(state.retry?.resetAt ?? null)).toBe("2026-11-30T09:29:08.000Z");
  });

  it("…also when the snapshot and the refusal arrive in different batches (a relay flushing between them)", () => {
    const parsed = parseCapture(readFileSync(path.join(dir, "codex-ratelimit-appserver-usage-limit.jsonl"), "utf8"));
    let threadId: string | null = null;
    const events = parsed.items.flatMap((item) => {
      // One line per batch, each naming the stream's thread as the relay does (?threadId=).
      const result = normalizeBatch(parsed.format, [item], { receivedAt: Date.parse("2026-11-30T08:30:00Z"), threadId });
      threadId = result.context.threadId;
      return result.lines.flatMap((line) => (line.event ? [line.event] : []));
    });
    const refusal = events.find((e) => e.type === "retry");
    expect(refusal?.error?.details).not.toHaveProperty("rateLimits");
    const state = replay(events.map((e, seq) => ({ ...e, seq })), Date.parse("2026-11-30T08:30:00Z"));
    expect(state.status).toBe("waiting_reset");
    expect(iso(state.retry?.resetAt ?? null)).toBe("2026-11-30T09:29:08.000Z");
  });

  it("each snapshot is observed when its line was sent", () => {
    const limits = capture("claude-ratelimit-allowed-warning").lines.flatMap((line) => line.limits ?? []);
    expect(iso(limits[0].observedAt)).toBe("2026-11-30T08:28:00.452Z");
  });
});

describe("limit snapshots without a thread", () => {
  const receivedAt = Date.parse("2026-11-30T08:30:00Z");
  const rateLimits = { limitId: "codex", primary: { usedPercent: 42, windowDurationMins: 300, resetsAt: 1796030922 }, secondary: null };

  it("an account/rateLimits/updated before any thread is kept for its windows", () => {
    const [line] = normalizeBatch("codex", [{ method: "account/rateLimits/updated", params: { rateLimits } }], { receivedAt }).lines;
    expect(line.event).toBeNull();
    expect(line.limits).toMatchObject([{ window: "primary", usedPercent: 42, threadId: null }]);
  });

  it("the answer to account/rateLimits/read yields the same windows", () => {
    const [line] = normalizeBatch("codex", [{ id: 3, result: { rateLimits } }], { receivedAt }).lines;
    expect(line.nativeType).toBe("response");
    expect(line.limits).toMatchObject([{ window: "primary", usedPercent: 42, resetAt: 1796030922000 }]);
  });

  it("a Claude rate_limit_event without a window (a plain 429) is no snapshot", () => {
    const [line] = normalizeBatch("claude", [{ type: "rate_limit_event", rate_limit_info: { status: "rejected" }, session_id: "s" }], { receivedAt }).lines;
    expect(line.limits).toBeUndefined();
  });
});

describe("canonical limit.updated", () => {
  const receivedAt = Date.parse("2026-11-30T08:30:00Z");
  it.each<[string, object, Partial<LimitSnapshot> | string]>([
    [
      "a window of no thread",
      { type: "limit.updated", provider: "anthropic", account: "team", window: "five_hour", usedPercent: 92, windowMinutes: 300, resetsAt: "2026-11-30T12:28:00Z", status: "warning" },
      { account: "team", window: "five_hour", usedPercent: 92, resetAt: Date.parse("2026-11-30T12:28:00Z"), status: "warning", threadId: null, observedAt: receivedAt },
    ],
    ["status from the used share", { type: "limit.updated", provider: "openai", window: "primary", usedPercent: 100, resetsAt: 1796030948000 }, { status: "rejected", resetAt: 1796030948000 }],
    ["a percentage out of range", { type: "limit.updated", provider: "openai", window: "primary", usedPercent: 120 }, "usedPercent: expected a number between 0 and 100"],
    ["no window", { type: "limit.updated", provider: "openai" }, "window: required"],
    ["an unknown status", { type: "limit.updated", provider: "openai", window: "w", status: "full" }, "status: expected one of ok, warning, rejected"],
  ])("%s", (_name, item, expected) => {
    const result = normalizeBatch("canonical", [item], { receivedAt });
    if (typeof expected === "string") {
      expect(result.rejected[0].error).toContain(expected);
      return;
    }
    expect(result.rejected).toEqual([]);
    expect(result.lines[0].limits?.[0]).toMatchObject(expected);
  });

  it("names its thread when given one, and is stored there as a limit.updated event", () => {
    const result = normalizeBatch("canonical", [{ type: "limit.updated", threadId: "t1", provider: "openai", window: "primary", usedPercent: 5 }], { receivedAt });
    expect(result.lines[0].event).toMatchObject({ type: "limit.updated", threadId: "t1" });
    expect(result.lines[0].limits?.[0].threadId).toBe("t1");
  });

  it("a canonical error's provider headers become snapshots", () => {
    const headers = {
      "anthropic-ratelimit-unified-5h-utilization": "0.92",
      "anthropic-ratelimit-unified-5h-reset": "1796041680",
      "anthropic-ratelimit-unified-5h-status": "allowed_warning",
    };
    const result = normalizeBatch("canonical", [{ type: "retry", threadId: "t1", provider: "anthropic", error: { httpStatus: 429, headers } }], { receivedAt });
    expect(result.lines[0].limits).toMatchObject([{ provider: "anthropic", window: "five_hour", usedPercent: 92, status: "warning", threadId: "t1" }]);
  });
});

describe("provider headers", () => {
  const at = Date.parse("2026-11-30T08:28:08Z");
  it.each<[string, Record<string, string>, Row[]]>([
    [
      "Anthropic unified windows (the rejected capture's headers)",
      {
        "anthropic-ratelimit-unified-5h-reset": "1796041688",
        "anthropic-ratelimit-unified-5h-status": "rejected",
        "anthropic-ratelimit-unified-5h-utilization": "1",
        "anthropic-ratelimit-unified-7d-reset": "1796286488",
        "anthropic-ratelimit-unified-7d-status": "allowed",
        "anthropic-ratelimit-unified-7d-utilization": "0.3",
      },
      [
        ["five_hour", "rejected", 100, 300, "2026-11-30T12:28:08.000Z"],
        ["seven_day", "ok", 30, 10_080, "2026-12-03T08:28:08.000Z"],
      ],
    ],
    [
      "Codex x-codex-* (the usage-limit capture's headers)",
      {
        "x-codex-primary-used-percent": "100",
        "x-codex-primary-window-minutes": "300",
        "x-codex-primary-reset-at": "1796030948",
        "x-codex-rate-limit-reached-type": "rate_limit_reached",
      },
      [["primary", "rejected", 100, 300, "2026-11-30T09:29:08.000Z", "rate_limit_reached"]],
    ],
    [
      "x-ratelimit-* buckets",
      { "x-ratelimit-limit-requests": "50", "x-ratelimit-remaining-requests": "5", "x-ratelimit-reset-requests": "6m0s" },
      [["requests", "warning", 90, null, "2026-11-30T08:34:08.000Z"]],
    ],
    [
      "anthropic-ratelimit-* buckets",
      { "anthropic-ratelimit-tokens-limit": "38000", "anthropic-ratelimit-tokens-remaining": "0", "anthropic-ratelimit-tokens-reset": "2026-11-30T08:28:10Z" },
      [["tokens", "rejected", 100, null, "2026-11-30T08:28:10.000Z"]],
    ],
    ["nothing about limits", { "retry-after": "2" }, []],
  ])("%s", (_name, headers, expected) => {
    expect(rows({ lines: [{ limits: headerLimitSnapshots(headers, "p", at, null) }] } as unknown as BatchResult)).toEqual(expected);
  });
});
