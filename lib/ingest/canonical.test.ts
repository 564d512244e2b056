import { describe, expect, it } from "vitest";
import { normalizeCanonicalBatch } from "./batch";
import { normalizeCanonical } from "./canonical";
import { parseEventTime } from "./time";

const NOW = Date.UTC(2026, 10, 29, 17, 0, 0);
const ok = { threadId: "t1", type: "retry" };

describe("canonical validation errors name their field", () => {
  const cases: [string, unknown, string][] = [
    ["not an object", 42, "expected a JSON object"],
    ["array", [ok], "expected a JSON object"],
    ["missing threadId", { type: "retry" }, "threadId: required"],
    ["empty threadId", { threadId: "", type: "retry" }, "threadId: expected a non-empty string"],
    ["threadId too long", { threadId: "x".repeat(201), type: "retry" }, "threadId: expected a non-empty string of at most 200 characters"],
    ["numeric threadId", { threadId: 7, type: "retry" }, "threadId: expected a non-empty string"],
    ["id too long", { ...ok, id: "k".repeat(201) }, "id: expected a non-empty string of at most 200 characters"],
    ["missing type", { threadId: "t1" }, "type: required (expected one of thread.started"],
    ["unknown type", { threadId: "t1", type: "unknown" }, "type: expected one of thread.started, turn.started, progress, retry"],
    ["turnId not string", { ...ok, turnId: 5 }, "turnId: expected a non-empty string"],
    ["parentThreadId empty", { ...ok, parentThreadId: "" }, "parentThreadId: expected a non-empty string"],
    ["at unparseable", { ...ok, at: "yesterday" }, "at: not a valid ISO-8601 time"],
    ["at wrong type", { ...ok, at: true }, "at: expected an ISO-8601 string or epoch milliseconds"],
    ["at before 2000", { ...ok, at: "1999-12-31T23:59:59Z" }, "at: time before 2000-01-01"],
    ["at epoch seconds", { ...ok, at: 1795971676 }, "at: time before 2000-01-01 is not plausible (looks like epoch seconds"],
    ["at far future", { ...ok, at: NOW + 2 * 86_400_000 }, "at: time 2026-12-01T17:00:00.000Z is more than 1 day after the receive time"],
    ["at invalid date", { ...ok, at: "2026-02-30T00:00:00Z" }, "at: not a valid ISO-8601 time"],
    ["agent not string", { ...ok, agent: 1 }, "agent: expected a string of at most 200 characters"],
    ["provider too long", { ...ok, provider: "p".repeat(201) }, "provider: expected a string"],
    ["model not string", { ...ok, model: ["gpt"] }, "model: expected a string"],
    ["title too long", { ...ok, title: "t".repeat(1001) }, "title: expected a string of at most 1000 characters"],
    ["policy number", { ...ok, policy: 3 }, "policy: expected a policy preset name or a custom policy object"],
    ["attempt negative", { ...ok, attempt: -1 }, "attempt: expected an integer ≥ 0"],
    ["attempt fractional", { ...ok, attempt: 1.5 }, "attempt: expected an integer ≥ 0"],
    ["attempt string", { ...ok, attempt: "2" }, "attempt: expected an integer ≥ 0"],
    ["maxAttempts zero", { ...ok, maxAttempts: 0 }, "maxAttempts: expected an integer ≥ 1 or null"],
    ["delayMs negative", { ...ok, delayMs: -5 }, "delayMs: expected a number of milliseconds ≥ 0"],
    ["delayMs string", { ...ok, delayMs: "5s" }, "delayMs: expected a number of milliseconds ≥ 0"],
    ["willRetry string", { ...ok, willRetry: "yes" }, "willRetry: expected true or false"],
    ["progressCount zero", { ...ok, progressCount: 0 }, "progressCount: expected an integer ≥ 1"],
    ["error not object", { ...ok, error: "boom" }, "error: expected an object {httpStatus, code, message, retryAfter, headers, details}"],
    ["httpStatus too small", { ...ok, error: { httpStatus: 99 } }, "error.httpStatus: expected an integer between 100 and 599"],
    ["httpStatus too big", { ...ok, error: { httpStatus: 600 } }, "error.httpStatus: expected an integer between 100 and 599"],
    ["httpStatus fractional", { ...ok, error: { httpStatus: 429.5 } }, "error.httpStatus: expected an integer between 100 and 599"],
    ["httpStatus string", { ...ok, error: { httpStatus: "429" } }, "error.httpStatus: expected an integer between 100 and 599"],
    ["code number", { ...ok, error: { code: 5 } }, "error.code: expected a string of at most 200 characters or a codexErrorInfo object"],
    ["message number", { ...ok, error: { message: 5 } }, "error.message: expected a string"],
    ["retryAfter bool", { ...ok, error: { retryAfter: true } }, "error.retryAfter: expected a string (delta-seconds or HTTP-date) or a number"],
    ["headers array", { ...ok, error: { headers: ["a"] } }, "error.headers: expected an object of string header values"],
    ["header value number", { ...ok, error: { headers: { "retry-after": 2 } } }, "error.headers.retry-after: expected a string header value"],
  ];
  it.each(cases)("%s", (_name, item, expected) => {
    const r = normalizeCanonical(item, NOW);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toContain(expected);
  });

  it("reports every bad field of one item", () => {
    const r = normalizeCanonical({ threadId: "", type: "nope", error: { httpStatus: 1 } }, NOW);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error).toContain("threadId:");
      expect(r.error).toContain("type:");
      expect(r.error).toContain("error.httpStatus:");
    }
  });
});

describe("canonical normalization", () => {
  it("keeps a give-up's own count of calls and its retry time", () => {
    const r = normalizeCanonical({ threadId: "t1", type: "turn.failed", attemptsMade: 5, retryMs: 11_517, error: { httpStatus: 429 } }, NOW);
    expect(r.ok && r.line.event).toMatchObject({ type: "turn.failed", attemptsMade: 5, retryMs: 11_517 });
    const bad = normalizeCanonical({ threadId: "t1", type: "turn.failed", attemptsMade: 0 }, NOW);
    expect(bad.ok ? "" : bad.error).toContain("attemptsMade: ");
  });

  it("defaults at to the receive time and keeps only known fields in the event", () => {
    const r = normalizeCanonical({ ...ok, extra: { a: 1 } }, NOW);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.line.event).toEqual({ type: "retry", at: NOW, threadId: "t1" });
    expect(r.line.raw).toEqual({ ...ok, extra: { a: 1 } });
    expect(r.line.format).toBe("canonical");
    expect(r.line.nativeType).toBeNull();
  });

  it.each([
    ["ISO with Z", "2026-11-29T16:59:43.797Z", Date.UTC(2026, 10, 29, 16, 59, 43, 797)],
    ["ISO with offset", "2026-11-29T17:59:43+01:00", Date.UTC(2026, 10, 29, 16, 59, 43)],
    ["ISO without zone is UTC", "2026-11-29T16:00:00", Date.UTC(2026, 10, 29, 16)],
    ["epoch ms", 1795971583797, 1795971583797],
    ["epoch ms as digits", "1795971583797", 1795971583797],
    ["less than a day ahead", NOW + 3_600_000, NOW + 3_600_000],
  ])("accepts at as %s", (_n, at, expected) => {
    const r = normalizeCanonical({ ...ok, at }, NOW);
    expect(r.ok && r.line.event?.at).toBe(expected);
  });

  it("maps every field", () => {
    const item = {
      id: "evt-1",
      threadId: "t1",
      turnId: "u1",
      parentThreadId: "p1",
      type: "retry",
      at: "2026-11-29T16:00:00Z",
      agent: "bridge",
      provider: "openai",
      model: "gpt-5.5",
      title: "Fix the build",
      policy: "codex-429-stall-bound",
      attempt: 2,
      maxAttempts: null,
      delayMs: 2000,
      willRetry: true,
      error: {
        httpStatus: 429,
        code: "rate_limit_exceeded",
        message: "Rate limit reached. Please try again in 2s.",
        retryAfter: "2",
        headers: { "Retry-After": "2", "X-RateLimit-Reset-Requests": "1s" },
        details: { body: "x" },
      },
    };
    const r = normalizeCanonical(item, NOW);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.line.idempotencyKey).toBe("evt-1");
    expect(r.line.event).toEqual({
      type: "retry",
      at: Date.UTC(2026, 10, 29, 16),
      threadId: "t1",
      turnId: "u1",
      parentThreadId: "p1",
      agent: "bridge",
      provider: "openai",
      model: "gpt-5.5",
      title: "Fix the build",
      policy: "codex-429-stall-bound",
      attempt: 2,
      maxAttempts: null,
      delayMs: 2000,
      willRetry: true,
      error: {
        httpStatus: 429,
        code: "rate_limit_exceeded",
        message: "Rate limit reached. Please try again in 2s.",
        retryAfter: "2",
        headers: { "retry-after": "2", "x-ratelimit-reset-requests": "1s" },
        details: { body: "x" },
      },
    });
  });

  it("keeps a custom policy object as given", () => {
    const policy = { name: "mine", kinds: ["rate_limit"], maxAttempts: null, baseDelayMs: 1000 };
    const r = normalizeCanonical({ ...ok, policy }, NOW);
    expect(r.ok && r.line.event?.policy).toEqual(policy);
  });

  it("accepts a codexErrorInfo object as code: variant name, its status, object kept in details", () => {
    const code = { responseStreamDisconnected: { httpStatusCode: 429 } };
    const r = normalizeCanonical({ ...ok, error: { code, message: "Reconnecting... 1/5", details: { additionalDetails: "x" } } }, NOW);
    expect(r.ok && r.line.event?.error).toEqual({
      httpStatus: 429,
      code: "responseStreamDisconnected",
      message: "Reconnecting... 1/5",
      details: { additionalDetails: "x", codexErrorInfo: code },
    });
  });

  it("an explicit httpStatus wins over the codexErrorInfo one", () => {
    const r = normalizeCanonical({ ...ok, error: { httpStatus: 503, code: { httpConnectionFailed: { httpStatusCode: null } } } }, NOW);
    expect(r.ok && r.line.event?.error).toMatchObject({ httpStatus: 503, code: "httpConnectionFailed" });
  });

  it("progress with progressCount gets lastAt", () => {
    const r = normalizeCanonical({ threadId: "t", type: "progress", progressCount: 12, at: NOW - 5 }, NOW);
    expect(r.ok && r.line.event).toMatchObject({ progressCount: 12, lastAt: NOW - 5 });
  });
});

describe("canonical batches", () => {
  it("keeps good items, rejects bad ones by index", () => {
    const r = normalizeCanonicalBatch([ok, { type: "retry" }, { ...ok, id: "a" }], { receivedAt: NOW });
    expect(r.lines.map((l) => l.index)).toEqual([0, 2]);
    expect(r.rejected).toEqual([{ index: 1, error: "threadId: required" }]);
  });

  it("derives keys without id from the item and, without `at`, its receive time; the id otherwise", () => {
    const items = [ok, ok, { ...ok, attempt: 1 }, { ...ok, id: "mine" }];
    const a = normalizeCanonicalBatch(items, { receivedAt: NOW });
    const keys = a.lines.map((l) => l.idempotencyKey);
    // However a producer splits its batches, the same item received at the same time has the same key.
    const split = [...normalizeCanonicalBatch(items.slice(0, 1), { receivedAt: NOW }).lines, ...normalizeCanonicalBatch(items.slice(1), { receivedAt: NOW }).lines];
    expect(split.map((l) => l.idempotencyKey)).toEqual(keys);
    expect(keys[1]).toBe(keys[0]);
    expect(new Set(keys).size).toBe(3);
    expect(keys[3]).toBe("mine");
    // Derived keys sort by the line's time (here its receive time: it has none of its own).
    expect(keys[0]).toBe(`canonical@${NOW.toString(36).padStart(9, "0")}:${keys[0].slice(-64)}`);
    expect(keys[0]).toMatch(/^canonical@[0-9a-z]{9}:[0-9a-f]{64}$/);
    // Without `at`, the same item ten minutes later is a new event; with `at`, a re-send whenever it comes.
    expect(normalizeCanonicalBatch([ok], { receivedAt: NOW + 600_000 }).lines[0].idempotencyKey).not.toBe(keys[0]);
    const timed = { ...ok, at: NOW - 1_000 };
    expect(normalizeCanonicalBatch([timed], { receivedAt: NOW + 600_000 }).lines[0].idempotencyKey).toBe(
      normalizeCanonicalBatch([timed], { receivedAt: NOW }).lines[0].idempotencyKey,
    );
    // Key order inside the JSON does not matter.
    const c = normalizeCanonicalBatch([{ type: "retry", threadId: "t1" }], { receivedAt: NOW });
    expect(c.lines[0].idempotencyKey).toBe(keys[0]);
  });
});

describe("parseEventTime", () => {
  it.each([
    [null, false],
    [Number.NaN, false],
    ["2026-13-01T00:00:00Z", false],
    ["2026-11-29 17:00:00Z", true],
    ["2026-11-29", true],
    ["29 Nov 2026", false],
  ])("%s → ok=%s", (value, expected) => {
    expect(parseEventTime(value, NOW).ok).toBe(expected);
  });
});
