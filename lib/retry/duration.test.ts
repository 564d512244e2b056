import { describe, expect, it } from "vitest";
import { clockDuration, compactDuration, humanDuration, noteDuration, parseDuration } from "./duration";
import { MIN, SEC } from "./testing";

const HOUR = 60 * MIN;

describe("parseDuration", () => {
  it.each<[string, number | null]>([
    ["6m0s", 6 * MIN],
    ["1.5s", 1500],
    ["20ms", 20],
    ["1h2m3s", HOUR + 2 * MIN + 3 * SEC],
    ["2 seconds", 2 * SEC],
    ["45", 45 * SEC],
    ["", null],
    ["soon", null],
    ["5 apples", null],
  ])("%j → %j", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each<[string, number | null]>([
    ["40", 40],
    ["250ms", 250],
    ["2m", 2 * MIN],
    ["5 S", 5 * SEC],
    ["soon", null],
  ])("with bare milliseconds (the relay's options) %j → %j", (text, ms) => {
    expect(parseDuration(text, "ms")).toBe(ms);
  });
});

describe("each reader's spelling", () => {
  it.each([
    [noteDuration, 250, "250 ms"],
    [noteDuration, 1_770, "1.77 s"],
    [noteDuration, 65_000, "65 s"],
    [noteDuration, 150_000, "2.5 min"],
    [clockDuration, 65_000, "1:05"],
    [clockDuration, 3_723_000, "1:02:03"],
    [humanDuration, 65_000, "1 min 5 s"],
    [humanDuration, -1_800, "1.8 s"],
    [compactDuration, 250, "250ms"],
    [compactDuration, 1_500, "1.5s"],
    [compactDuration, 125_000, "2m 5s"],
  ])("%o(%i) → %s", (format, ms, text) => {
    expect(format(ms)).toBe(text);
  });
});
