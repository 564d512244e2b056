import { describe, expect, it } from "vitest";
import { attemptLabel, byteSize, episodeAttemptsText, clockDuration, codeBreaks, countdownText, humanDuration, kindLabel, quotaShare, relativeTime } from "./format";

describe("countdowns read at a glance", () => {
  it.each([
    ["43 s ahead, exact", 43_000, false, "in 0:43"],
    ["43 s ahead, estimated", 43_000, true, "~0:43"],
    ["12 s past", -12_000, false, "overdue 0:12"],
    ["past, even when estimated", -61_000, true, "overdue 1:01"],
    ["over an hour", 3_723_000, false, "in 1:02:03"],
  ])("%s → %s", (_name, delta, estimated, text) => {
    expect(countdownText(1_000_000 + delta, 1_000_000, estimated)).toBe(text);
  });

  it.each([
    [0, "0:00"],
    [999, "0:00"],
    [59_999, "0:59"],
    [600_000, "10:00"],
  ])("clock duration of %i ms is %s", (ms, text) => expect(clockDuration(ms)).toBe(text));
});

describe("relative and human durations", () => {
  it.each([
    [12 * 60_000, "in 12 min"],
    [-3 * 3_600_000, "3 h ago"],
    [45_000, "in 45 s"],
    [3 * 86_400_000, "in 3 d"],
  ])("relative %i → %s", (delta, text) => expect(relativeTime(delta, 0)).toBe(text));

  it.each([
    [1_800, "1.8 s"],
    [250, "250 ms"],
    [300_000, "5 min"],
    [3_720_000, "1 h 2 min"],
  ])("human %i → %s", (ms, text) => expect(humanDuration(ms)).toBe(text));
});

describe("labels say what the trouble is", () => {
  it.each([
    ["rate_limit", "429 rate limit"],
    ["capacity", "capacity"],
    ["usage_limit", "usage limit"],
    [null, "—"],
    ["someNewKind", "someNewKind"],
  ])("kind %s → %s", (kind, label) => expect(kindLabel(kind)).toBe(label));

  it.each([
    [1, 5, "Retrying 1/5"],
    [3, null, "Retrying 3"],
  ])("attempt %s of %s → %s", (n, m, label) => expect(attemptLabel(n, m)).toBe(label));
});

describe("stored sizes and quota shares", () => {
  it.each([
    [0, "0 B"],
    [812, "812 B"],
    [4300, "4.2 KiB"],
    [1.5 * 1024 ** 3, "1.5 GiB"],
    [20 * 1024 ** 3, "20 GiB"],
  ])("%d bytes → %s", (bytes, text) => {
    expect(byteSize(bytes)).toBe(text);
  });

  it("never shows a used quota as 0 %", () => {
    expect(quotaShare(0, 100)).toBe("0 %");
    expect(quotaShare(1, 1_000)).toBe("< 1 %");
    expect(quotaShare(37, 100)).toBe("37 %");
  });
});

describe("error codes wrap where a person reads a break", () => {
  it.each([
    ["503 server_is_overloaded", ["503 server_", "is_", "overloaded"]],
    ["429 rate_limit_exceeded", ["429 rate_", "limit_", "exceeded"]],
    ["overloaded_error", ["overloaded_", "error"]],
    ["usage-limit.reached/v2", ["usage-", "limit.", "reached/", "v2"]],
    ["429", ["429"]],
    ["", [""]],
  ])("%s", (code, pieces) => {
    expect(codeBreaks(code)).toEqual(pieces);
    expect(codeBreaks(code).join("")).toBe(code);
  });
});

describe("an episode's attempts", () => {
  it.each([
    [{ outcome: "failed", attemptsMade: 5, reportedRetryMs: 11_517 }, "failed after 5 attempts (11.5 s retrying)"],
    [{ outcome: "recovered", attemptsMade: 3, reportedRetryMs: null }, "recovered after 3 attempts"],
    [{ outcome: null, attemptsMade: 1, reportedRetryMs: null }, "1 attempt so far"],
    [{ outcome: "exhausted", attemptsMade: 4, reportedRetryMs: 120_000 }, "exhausted after 4 attempts (2 min retrying)"],
  ])("%j", (episode, text) => {
    expect(episodeAttemptsText(episode)).toBe(text);
  });
});
