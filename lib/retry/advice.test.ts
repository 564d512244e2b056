import { describe, expect, it } from "vitest";
import { latestReset, MAX_ADVICE_MS, minuteOnlyResetRange, parseAdvice } from "./advice";
import { MIN, SEC, T0 } from "./testing";
import type { AdviceSource, ErrorReport } from "./types";

const HOUR = 60 * MIN;

describe("parseAdvice: every kind of hint is read", () => {
  it.each<[string, ErrorReport, AdviceSource, number, number | undefined]>([
    ["Retry-After delta-seconds", { retryAfter: "2" }, "retry-after", 2 * SEC, undefined],
    ["Retry-After as a number", { retryAfter: 5 }, "retry-after", 5 * SEC, undefined],
    ["Retry-After fractional seconds", { retryAfter: "1.5" }, "retry-after", 1500, undefined],
    ["Retry-After from the headers", { headers: { "Retry-After": "7" } }, "retry-after", 7 * SEC, undefined],
    [
      "Retry-After HTTP-date, measured from the notice's own time",
      { retryAfter: new Date(T0 + 90 * SEC).toUTCString() },
      "retry-after-date",
      90 * SEC,
      T0 + 90 * SEC,
    ],
    ["'Please try again in 2s.'", { message: "Rate limit reached. Please try again in 2s." }, "message", 2 * SEC, undefined],
    ["'try again in 1.5s'", { message: "try again in 1.5s" }, "message", 1500, undefined],
    ["'try again in 500ms'", { message: "try again in 500ms" }, "message", 500, undefined],
    ["'try again in 1m30s'", { message: "try again in 1m30s" }, "message", 90 * SEC, undefined],
    ["'try again in 6m0s'", { message: "try again in 6m0s" }, "message", 6 * MIN, undefined],
    ["'try again in 1h2m'", { message: "try again in 1h2m" }, "message", HOUR + 2 * MIN, undefined],
    ["'try again in 20 seconds'", { message: "Please try again in 20 seconds" }, "message", 20 * SEC, undefined],
    ["'try again in' inside Codex additionalDetails", { details: { additionalDetails: "Rate limit reached … Please try again in 2s." } }, "message", 2 * SEC, undefined],
    ["retry_after_ms in a provider body", { details: { error: { retry_after_ms: 1200 } } }, "retry_after_ms", 1200, undefined],
    ["retry-after-ms header", { headers: { "retry-after-ms": "250" } }, "retry_after_ms", 250, undefined],
    ["retry_delay_ms in details", { details: { retry_delay_ms: 2000 } }, "retry_delay_ms", 2000, undefined],
    ["x-ratelimit-reset-requests '6m0s'", { headers: { "x-ratelimit-reset-requests": "6m0s" } }, "x-ratelimit-reset", 6 * MIN, T0 + 6 * MIN],
    ["x-ratelimit-reset-tokens '1.5s'", { headers: { "x-ratelimit-reset-tokens": "1.5s" } }, "x-ratelimit-reset", 1500, T0 + 1500],
    ["x-ratelimit-reset-tokens '20ms'", { headers: { "x-ratelimit-reset-tokens": "20ms" } }, "x-ratelimit-reset", 20, T0 + 20],
    [
      "Anthropic anthropic-ratelimit-*-reset RFC 3339 instant",
      { headers: { "anthropic-ratelimit-requests-reset": new Date(T0 + 45 * SEC).toISOString() } },
      "anthropic-reset",
      45 * SEC,
      T0 + 45 * SEC,
    ],
    ["Codex resetsAt in epoch seconds", { details: { resetsAt: T0 / 1000 + 600 } }, "resetsAt", 10 * MIN, T0 + 10 * MIN],
    [
      "Codex rateLimits.primary.resetsAt of a used-up window",
      { details: { rateLimits: { primary: { usedPercent: 100, resetsAt: T0 / 1000 + 3600 } } } },
      "resetsAt",
      HOUR,
      T0 + HOUR,
    ],
  ])("%s", (_name, error, source, delayMs, resetAt) => {
    const advice = parseAdvice(error, T0);
    expect(advice.hints).toEqual([resetAt === undefined ? { source, delayMs } : { source, delayMs, resetAt }]);
    expect(advice.authoritative).toEqual(advice.hints[0]);
    expect(advice.ignored).toEqual([]);
  });

  it("a source's own announced delay is a hint of its own (delayMs)", () => {
    expect(parseAdvice(null, T0, 2000).hints).toEqual([{ source: "delayMs", delayMs: 2000 }]);
  });
});

describe("parseAdvice: 'try again at' usage-limit text is read as UTC on the notice's date", () => {
  const at = (h: number, m: number) => Date.UTC(2026, 10, 29, h, m);
  it.each<[string, string, number, number]>([
    ["5:59 PM later the same day", "You've hit your usage limit. Try again at 5:59 PM.", at(17, 0), at(17, 59)],
    ["3:04 PM already passed rolls to the next day", "… or try again at 3:04 PM.", at(17, 0), at(15, 4) + 24 * HOUR],
    ["the minute named has begun: the reset lies within it, by its end", "… or try again at 5:00 PM.", at(17, 0) + 25 * SEC, at(17, 1)],
    ["12:30 AM is half past midnight", "try again at 12:30 AM", at(0, 10), at(0, 30)],
    ["12:05 PM is just after noon", "try again at 12:05 pm", at(11, 0), at(12, 5)],
    ["a 24-hour time without AM/PM", "try again at 18:45", at(17, 0), at(18, 45)],
  ])("%s", (_name, message, noticeAt, resetAt) => {
    expect(parseAdvice({ message }, noticeAt).hints).toEqual([{ source: "usage-limit-text", delayMs: resetAt - noticeAt, resetAt }]);
  });

  it.each<[string, string, number, number]>([
    ["Claude's 'resets 12:28pm (UTC)'", "You've hit your session limit · resets 12:28pm (UTC)", at(8, 28), at(12, 28)],
    ["'reset at 5pm', an hour alone", "Your limit will reset at 5pm", at(8, 0), at(17, 0)],
    ["'resets 18:45' in 24-hour time", "weekly limit reached · resets 18:45", at(17, 0), at(18, 45)],
  ])("%s", (_name, message, noticeAt, resetAt) => {
    expect(parseAdvice({ message }, noticeAt).hints).toEqual([{ source: "usage-limit-text", delayMs: resetAt - noticeAt, resetAt }]);
  });

  it("'resets 5 times' names no time of day", () => {
    expect(parseAdvice({ message: "the counter resets 5 times a day" }, T0).hints).toEqual([]);
  });

  it("a time that is no time of day is ignored with a reason", () => {
    expect(parseAdvice({ message: "try again at 13:99" }, T0).ignored).toEqual([
      { source: "usage-limit-text", value: "try again at 13:99", reason: "not a time of day" },
    ]);
  });
});

describe("latestReset: the window reset the hints name", () => {
  const text = (resetAt: number) => ({ source: "usage-limit-text" as const, delayMs: resetAt - T0, resetAt });
  const exact = (resetAt: number) => ({ source: "resetsAt" as const, delayMs: resetAt - T0, resetAt });
  it.each<[string, Parameters<typeof latestReset>[0], number | null]>([
    ["none named", [{ source: "retry-after", delayMs: 5 * SEC }], null],
    ["the latest of several", [exact(T0 + 5 * MIN), exact(T0 + 9 * MIN)], T0 + 9 * MIN],
    ["a text alone", [text(T0 + MIN)], T0 + MIN],
    ["an exact instant within the text's minute is the same reset, to the second", [text(T0 + MIN), exact(T0 + MIN + 8 * SEC)], T0 + MIN + 8 * SEC],
    ["also when the text's minute had begun (read as its end)", [text(T0 + MIN), exact(T0 + 20 * SEC)], T0 + 20 * SEC],
    ["a text naming another reset still counts", [text(T0 + 90 * MIN), exact(T0 + 8 * SEC)], T0 + 90 * MIN],
  ])("%s", (_name, hints, expected) => {
    expect(latestReset(hints)).toBe(expected);
  });

  it.each<[string, Parameters<typeof latestReset>[0], number, number]>([
    ["a text gives way to a remembered exact reset within its minute", [text(T0 + MIN)], T0 + 20 * SEC, T0 + 20 * SEC],
    ["a remembered reset of another window leaves the text alone", [text(T0 + 90 * MIN)], T0 + 20 * SEC, T0 + 90 * MIN],
    ["a remembered reset never replaces an exact hint of the error itself", [exact(T0 + 9 * MIN)], T0 + 9 * MIN + 20 * SEC, T0 + 9 * MIN],
  ])("%s", (_name, hints, remembered, expected) => {
    expect(latestReset(hints, remembered)).toBe(expected);
  });
});

describe("minuteOnlyResetRange: where an exact reset may stand behind a minute-only text", () => {
  const at = (h: number, m: number, s = 0) => Date.UTC(2026, 10, 29, h, m, s);
  const range = (from: number, to: number) => ({ from, to });
  it.each<[string, ErrorReport | null, number, number | null, ReturnType<typeof minuteOnlyResetRange>]>([
    ["a minute ahead: within a minute of it", { message: "Try again at 5:59 PM." }, at(17, 0), null, range(at(17, 58) + 1, at(18, 0) - 1)],
    ["its minute has begun: from the notice on", { message: "try again at 5:00 PM" }, at(17, 0, 25), null, range(at(17, 0, 25), at(17, 2) - 1)],
    ["Claude's 'resets 12:28pm (UTC)'", { message: "You've hit your session limit · resets 12:28pm (UTC)" }, at(8, 28), null, range(at(12, 27) + 1, at(12, 29) - 1)],
    ["a remembered reset of another window does not count", { message: "Try again at 5:59 PM." }, at(17, 0), at(19, 0), range(at(17, 58) + 1, at(18, 0) - 1)],
    ["a remembered reset within it: nothing to look for", { message: "Try again at 5:59 PM." }, at(17, 0), at(17, 59, 4), null],
    ["the error names the exact reset itself", { message: "Try again at 5:59 PM.", details: { resetsAt: at(17, 59, 4) / 1000, usedPercent: 100 } }, at(17, 0), null, null],
    ["no reset text: a delay only", { message: "Rate limited", retryAfter: "30" }, at(17, 0), null, null],
    ["no error", null, at(17, 0), null, null],
  ])("%s", (_name, error, noticeAt, remembered, expected) => {
    expect(minuteOnlyResetRange(error, noticeAt, remembered)).toEqual(expected);
  });
});

describe("parseAdvice: invalid, negative or absurd values are ignored with a reason, never clamped", () => {
  it.each<[string, ErrorReport, AdviceSource, string]>([
    ["a negative Retry-After", { retryAfter: "-5" }, "retry-after", "negative"],
    ["a Retry-After date in the past", { retryAfter: new Date(T0 - 10 * SEC).toUTCString() }, "retry-after-date", "in the past"],
    ["an unparseable Retry-After", { retryAfter: "soon" }, "retry-after-date", "not a date"],
    ["an absurd Retry-After (8 days)", { retryAfter: String(8 * 24 * 3600) }, "retry-after", "absurd: more than 7 days"],
    ["a NaN retry_after_ms", { details: { retry_after_ms: "abc" } }, "retry_after_ms", "not a number"],
    ["a negative retry_delay_ms", { details: { retry_delay_ms: -1 } }, "retry_delay_ms", "negative"],
    ["resetsAt given in milliseconds (absurd as seconds)", { details: { resetsAt: T0 + 1000 } }, "resetsAt", "absurd: more than 7 days"],
    ["a resetsAt in the past", { details: { resetsAt: T0 / 1000 - 60 } }, "resetsAt", "in the past"],
    ["an Anthropic reset in the past", { headers: { "anthropic-ratelimit-tokens-reset": new Date(T0 - 1).toISOString() } }, "anthropic-reset", "in the past"],
    ["an x-ratelimit-reset that is no duration", { headers: { "x-ratelimit-reset-requests": "5 apples" } }, "x-ratelimit-reset", "not a duration"],
    ["a window that is not used up", { details: { rateLimits: { secondary: { usedPercent: 20, resetsAt: T0 / 1000 + 86400 } } } }, "resetsAt", "window not exhausted (20 % used)"],
  ])("%s", (_name, error, source, reason) => {
    const advice = parseAdvice(error, T0);
    expect(advice.hints).toEqual([]);
    expect(advice.authoritative).toBeNull();
    expect(advice.ignored).toEqual([expect.objectContaining({ source, reason })]);
  });

  it("7 days exactly is still valid advice", () => {
    expect(parseAdvice({ retryAfter: MAX_ADVICE_MS / 1000 }, T0).hints).toEqual([{ source: "retry-after", delayMs: MAX_ADVICE_MS }]);
  });
  it("an absurd announced delay is ignored too", () => {
    expect(parseAdvice(null, T0, Infinity).ignored).toEqual([{ source: "delayMs", value: "Infinity", reason: "not a number" }]);
  });
});

describe("parseAdvice: all hints are kept and the longest valid delay is authoritative", () => {
  it("a longer hint wins over a competing shorter one", () => {
    const advice = parseAdvice({ message: "Please try again in 41m0s. Provider detail: Please try again in 1s.", retryAfter: "120" }, T0);
    expect(advice.hints.map((h) => [h.source, h.delayMs])).toEqual([
      ["retry-after", 120 * SEC],
      ["message", 41 * MIN],
      ["message", 1 * SEC],
    ]);
    expect(advice.authoritative).toEqual({ source: "message", delayMs: 41 * MIN });
  });
  it("an ignored hint never becomes authoritative, the valid ones still count", () => {
    const advice = parseAdvice({ retryAfter: "-1", message: "try again in 3s" }, T0);
    expect(advice.authoritative).toEqual({ source: "message", delayMs: 3 * SEC });
    expect(advice.ignored).toHaveLength(1);
  });
  it("no error gives no advice", () => {
    expect(parseAdvice(undefined, T0)).toEqual({ hints: [], authoritative: null, ignored: [] });
  });
});
