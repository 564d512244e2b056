import { describe, expect, it } from "vitest";
import { bucketTick, compactCount, fromZoneInput, percent, toZoneInput } from "./axis";

const at = Date.UTC(2026, 10, 29, 14, 5);
const H = 3_600_000;

describe("axis ticks in UTC", () => {
  it.each([
    ["minute over an hour", "minute", H, "14:05"],
    ["hour over a day", "hour", 24 * H, "14:05"],
    ["hour over a week shows the date", "hour", 7 * 24 * H, "29 Nov, 14:05"],
    ["day", "day", 30 * 24 * H, "29 Nov"],
  ] as const)("%s → %s", (_name, unit, span, text) => expect(bucketTick(at, unit, span, "utc")).toBe(text));
});

describe("counts on an axis", () => {
  it.each([
    [0, "0"],
    [950, "950"],
    [1_800, "1.8K"],
    [200_000, "200K"],
  ])("%i → %s", (n, text) => expect(compactCount(n)).toBe(text));
});

describe("percentages", () => {
  it.each([
    [null, "—"],
    [0, "0 %"],
    [1 / 3, "33 %"],
    [1, "100 %"],
  ])("%s → %s", (share, text) => expect(percent(share)).toBe(text));
});

describe("custom range inputs", () => {
  it.each([
    ["utc", at, "2026-11-29T14:05"],
  ] as const)("%s round trip", (mode, ms, text) => {
    expect(toZoneInput(ms, mode)).toBe(text);
    expect(fromZoneInput(text, mode)).toBe(ms);
  });

  it("local inputs round-trip through the browser's zone", () => {
    expect(fromZoneInput(toZoneInput(at, "local"), "local")).toBe(at);
  });

  it.each([[""], ["yesterday"], ["2026-11-29"]])("%j is not a time", (value) => expect(fromZoneInput(value, "utc")).toBeNull());
});
