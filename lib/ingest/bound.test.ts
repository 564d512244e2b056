import { describe, expect, it } from "vitest";
import { normalizeBatch } from "./batch";
import { parseBody, TooManyItemsError } from "./body";
import { nulPath, storedTimeError } from "./bound";
import { MAX_DEPTH, MAX_ID_CHARS, MAX_ITEMS, MAX_RAW_CHARS, MAX_STORED_INT, MAX_STORED_TIME, MAX_STRING_CHARS, MIN_STORED_TIME } from "./limits";

const NOW = Date.UTC(2026, 10, 29, 12);

function nested(depth: number): unknown {
  let value: unknown = {};
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

describe("ingestion bounds", () => {
  it("rejects a line nested too deep before anything walks it, keeping the others", () => {
    for (const format of ["canonical", "codex", "codex-exec", "claude"] as const) {
      const good = format === "canonical" ? { threadId: "t1", type: "progress" } : { type: "system", subtype: "init", session_id: "t1", method: "thread/started", params: { thread: { id: "t1" } } };
      const deep = { ...good, extra: nested(5_000) };
      const r = normalizeBatch(format, [deep, good], { receivedAt: NOW, threadId: "t1" });
      expect(r.rejected).toEqual([{ index: 0, error: `nested deeper than ${MAX_DEPTH} levels` }]);
      expect(r.lines.map((l) => l.index)).toEqual([1]);
    }
  });

  it("cuts multi-MB strings and marks them; keeps a large raw payload as a marked preview", () => {
    const huge = "x".repeat(3 * 1024 * 1024);
    const r = normalizeBatch("canonical", [{ threadId: "t1", type: "retry", error: { httpStatus: 429, message: huge, headers: { "retry-after": huge }, details: Array(10).fill(huge) } }], { receivedAt: NOW });
    expect(r.rejected).toEqual([]);
    const error = r.lines[0].event!.error!;
    expect(error.message!.length).toBeLessThan(MAX_STRING_CHARS + 100);
    expect(error.message).toMatch(/… \[truncated: 3145728 characters\]$/);
    expect(error.details).toMatchObject({ truncated: true, preview: expect.any(String) });
    expect(r.lines[0].raw).toMatchObject({ truncated: true, preview: expect.any(String) });
    expect(JSON.stringify(r.lines[0].raw).length).toBeLessThan(MAX_RAW_CHARS + 1_000);
  });

  it("rejects an over-long id in native lines as in canonical ones", () => {
    const id = "s".repeat(MAX_ID_CHARS + 1);
    const r = normalizeBatch("claude", [{ type: "system", subtype: "init", session_id: id }], { receivedAt: NOW });
    expect(r.rejected[0].error).toMatch(/threadId: expected an id of at most 200 characters/);
  });

  it("replaces lone surrogates in ids (valid JSON, not UTF-8) as the database would, so a permalink can be built", () => {
    const r = normalizeBatch("codex", [{ method: "thread/started", params: { thread: { id: "t\ud800x\udc00" } } }], { receivedAt: NOW });
    expect(r.lines[0].event?.threadId).toBe("t\ufffdx\ufffd");
    expect(() => encodeURIComponent(r.lines[0].event!.threadId)).not.toThrow();
    const named = normalizeBatch("canonical", [{ threadId: "t1", type: "retry", provider: "p\ud800", model: "m\udc00", agent: "a\ud800" }], { receivedAt: NOW });
    expect(named.lines[0].event).toMatchObject({ provider: "p\ufffd", model: "m\ufffd", agent: "a\ufffd" });
    const pair = normalizeBatch("canonical", [{ threadId: "t\ud83d\ude00", type: "progress" }], { receivedAt: NOW });
    expect(pair.lines[0].event?.threadId).toBe("t\ud83d\ude00");
  });

  // Neither store holds a NUL in text nor an integer beyond 32 bits: such a line is refused, naming
  // the field, in every format, the same on both stores (never a failed write).
  it.each([
    ["canonical", { threadId: "t\u0000", type: "progress" }, "threadId: contains a NUL character (U+0000), which cannot be stored"],
    ["canonical", { threadId: "t1", type: "retry", error: { message: "a\u0000b" } }, "error.message: contains a NUL character"],
    ["canonical", { threadId: "t1", type: "retry", error: { details: ["ok", { "k\u0000": 1 }] } }, "error.details.1: contains a NUL character"],
    ["canonical", { threadId: "t1", type: "retry", attempt: 1e12 }, `attempt: expected a number between -${MAX_STORED_INT} and ${MAX_STORED_INT}`],
    ["canonical", { threadId: "t1", type: "retry", attempt: MAX_STORED_INT + 1 }, "attempt: expected a number between"],
    ["canonical", { threadId: "t1", type: "retry", delayMs: 1e12 }, "delayMs: expected a number between"],
    ["canonical", { threadId: "t1", type: "progress", progressCount: 2 ** 40 }, "progressCount: expected a number between"],
    ["claude", { type: "system", subtype: "api_retry", session_id: "s1", attempt: 1e12 }, "attempt: expected a number between"],
    ["claude", { type: "system", subtype: "api_retry", session_id: "s1", max_retries: 2 ** 31 }, "maxAttempts: expected a number between"],
    ["claude", { type: "system", subtype: "api_retry", session_id: "s1", retry_delay_ms: 1e15 }, "delayMs: expected a number between"],
    ["claude", { type: "system", subtype: "init", session_id: "s\u0000" }, "session_id: contains a NUL character"],
    ["codex", { method: "thread/started", params: { thread: { id: "t\u0000" } } }, "params.thread.id: contains a NUL character"],
    ["codex-exec", { type: "error", message: "\u0000" }, "message: contains a NUL character"],
    // Times: what both stores hold (years 0001–9999); an event's own time is bounded tighter (time.ts).
    ["canonical", { threadId: "t1", type: "progress", at: 1e16 }, "at: time 10000000000000000 is more than 1 day after"],
    ["canonical", { type: "limit.updated", provider: "anthropic", window: "5h", windowMinutes: 1e10 }, "windowMinutes: expected a number between"],
    ["canonical", { type: "limit.updated", provider: "anthropic", window: "5h", resetsAt: 1e16 }, "resetsAt: expected a time between 0001-01-01 and 9999-12-31 (UTC)"],
    ["canonical", { type: "limit.updated", provider: "anthropic", window: "5h", resetsAt: MAX_STORED_TIME + 1 }, "resetsAt: expected a time between"],
    ["canonical", { threadId: "t1", type: "retry", error: { headers: { "anthropic-ratelimit-unified-5h-reset": "99999999999999" } } }, `resetsAt of the "five_hour" window: expected a time between`],
    ["codex", { method: "account/rateLimits/updated", params: { rateLimits: { primary: { usedPercent: 50, resetsAt: 1e16 } } } }, `resetsAt of the "primary" window: expected a time`],
    ["codex", { method: "account/rateLimits/updated", params: { rateLimits: { primary: { usedPercent: 50, windowDurationMins: -1e10 } } } }, `windowMinutes of the "primary" window: expected a number`],
    ["claude", { type: "rate_limit_event", session_id: "s1", rate_limit_info: { rateLimitType: "five_hour", status: "allowed", resetsAt: 1e16 } }, `resetsAt of the "five_hour" window`],
  ] as const)("refuses what no store can hold: %s %j", (format, line, error) => {
    const r = normalizeBatch(format, [line], { receivedAt: NOW, threadId: "t1" });
    expect(r.rejected).toEqual([{ index: 0, error: expect.stringContaining(error) }]);
    expect(r.lines).toEqual([]);
  });

  it("keeps the largest integers both stores hold", () => {
    const r = normalizeBatch("canonical", [{ threadId: "t1", type: "retry", attempt: MAX_STORED_INT, maxAttempts: MAX_STORED_INT, delayMs: MAX_STORED_INT }], { receivedAt: NOW });
    expect(r.rejected).toEqual([]);
    expect(r.lines[0].event).toMatchObject({ attempt: MAX_STORED_INT, maxAttempts: MAX_STORED_INT, delayMs: MAX_STORED_INT });
  });

  it("keeps the longest window and the latest reset both stores hold", () => {
    const line = { type: "limit.updated", provider: "anthropic", window: "5h", windowMinutes: MAX_STORED_INT, resetsAt: MAX_STORED_TIME };
    const r = normalizeBatch("canonical", [line], { receivedAt: NOW });
    expect(r.rejected).toEqual([]);
    expect(r.lines[0].limits).toMatchObject([{ windowMinutes: MAX_STORED_INT, resetAt: MAX_STORED_TIME }]);
  });

  it.each([
    [MIN_STORED_TIME, null],
    [MAX_STORED_TIME, null],
    [Date.UTC(2026, 0, 1), null],
    [MIN_STORED_TIME - 1, "expected a time between 0001-01-01 and 9999-12-31 (UTC)"],
    [MAX_STORED_TIME + 1, "expected a time between 0001-01-01 and 9999-12-31 (UTC)"],
    [Number.NaN, "expected a time between 0001-01-01 and 9999-12-31 (UTC)"],
  ])("a time both stores hold: %d → %j", (ms, error) => {
    expect(storedTimeError(ms)).toBe(error);
  });

  it("stored times are exactly the four-digit years ISO-8601 writes", () => {
    expect(new Date(MIN_STORED_TIME).toISOString()).toBe("0001-01-01T00:00:00.000Z");
    expect(new Date(MAX_STORED_TIME).toISOString()).toBe("9999-12-31T23:59:59.999Z");
  });

  it.each([
    ["ok", null],
    ["\u0000", ""],
    [{ a: [1, "x", "y\u0000"] }, "a.2"],
    [{ a: { "b\u0000": "x" } }, "a"],
    [{ a: "\u0000", b: "\u0000" }, "a"],
    [[{}, 1, null, true], null],
  ])("finds where a NUL lies: %j → %j", (value, where) => {
    expect(nulPath(value)).toBe(where);
  });

  it("refuses more items than one request may carry, counting before parsing", () => {
    const lines = "{}\n".repeat(MAX_ITEMS + 1);
    expect(() => parseBody(lines, "application/x-ndjson")).toThrow(TooManyItemsError);
    expect(() => parseBody(JSON.stringify(Array(MAX_ITEMS + 1).fill({})))).toThrow(TooManyItemsError);
    expect(parseBody("{}\n".repeat(MAX_ITEMS), "application/x-ndjson").items).toHaveLength(MAX_ITEMS);
  });
});
