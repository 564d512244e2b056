import { describe, expect, it } from "vitest";
import { median, percentile } from "./stats";

const upTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe("percentile (nearest rank)", () => {
  it.each([
    { values: upTo(20), p: 95, expected: 19, why: "the p95 of 20 timings leaves out the largest" },
    { values: upTo(20), p: 50, expected: 10, why: "half the values at or below it" },
    { values: upTo(60), p: 95, expected: 57, why: "three of 60 above it" },
    { values: upTo(1000), p: 99, expected: 990, why: "a rank that is a whole number is taken as it is" },
    { values: upTo(7), p: 50, expected: 4, why: "a rank between two values goes up" },
    { values: upTo(20), p: 100, expected: 20, why: "p100 is the largest" },
    { values: upTo(20), p: 0, expected: 1, why: "p0 is the smallest" },
    { values: [42], p: 95, expected: 42, why: "one value is every percentile" },
  ])("p$p of $values.length values is $expected: $why", ({ values, p, expected }) => {
    expect(percentile(values, p)).toBe(expected);
  });
});

describe("median", () => {
  it.each([
    { values: [3, 1, 2], expected: 2 },
    { values: [4, 1, 3, 2], expected: 3 },
  ])("of $values is $expected", ({ values, expected }) => {
    expect(median(values)).toBe(expected);
  });
});
