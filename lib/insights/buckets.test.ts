import { describe, expect, it } from "vitest";
import { BUCKET_MS, bucketStart, bucketStarts, chooseBucket, fillBuckets, pickSeries } from "./buckets";
import { GAP_BOUNDS_MS, gapBinLabels } from "./gaps";

const H = 3_600_000;

describe("bucket size follows the range", () => {
  it.each([
    ["1 h", H, "minute"],
    ["3 h", 3 * H, "minute"],
    ["3 h 1 ms", 3 * H + 1, "hour"],
    ["24 h", 24 * H, "hour"],
    ["7 days", 7 * 24 * H, "hour"],
    ["30 days", 30 * 24 * H, "day"],
  ])("%s → %s", (_name, span, unit) => expect(chooseBucket(span)).toBe(unit));
});

describe("bucket math", () => {
  const t = Date.UTC(2026, 10, 29, 14, 5, 30, 250);
  it.each([
    ["minute", Date.UTC(2026, 10, 29, 14, 5)],
    ["hour", Date.UTC(2026, 10, 29, 14)],
    ["day", Date.UTC(2026, 10, 29)],
  ] as const)("a %s bucket starts on the epoch grid", (unit, start) => expect(bucketStart(t, BUCKET_MS[unit])).toBe(start));

  it("lists every bucket overlapping [from, to)", () => {
    const from = Date.UTC(2026, 10, 29, 14, 0, 30);
    expect(bucketStarts(from, from + 3 * 60_000, 60_000)).toEqual([0, 1, 2, 3].map((m) => Date.UTC(2026, 10, 29, 14, m)));
    expect(bucketStarts(Date.UTC(2026, 10, 29, 14), Date.UTC(2026, 10, 29, 15), H)).toEqual([Date.UTC(2026, 10, 29, 14)]);
  });

  it("fills quiet buckets and absent series with zeros", () => {
    const starts = [0, 60_000, 120_000];
    const filled = fillBuckets(
      [
        { bucket: 0, series: "rate_limit", count: 2 },
        { bucket: 120_000, series: "capacity", count: 1 },
        { bucket: 120_000, series: "rate_limit", count: 3 },
        { bucket: 999_000, series: "rate_limit", count: 9 },
      ],
      starts,
      ["rate_limit", "capacity"],
    );
    expect(filled).toEqual([
      { at: 0, counts: { rate_limit: 2, capacity: 0 }, total: 2 },
      { at: 60_000, counts: { rate_limit: 0, capacity: 0 }, total: 0 },
      { at: 120_000, counts: { rate_limit: 3, capacity: 1 }, total: 4 },
    ]);
  });
});

describe("series selection", () => {
  const totals = new Map([
    ["gpt-5", 10],
    ["gpt-5-mini", 7],
    ["claude", 7],
    ["tiny", 1],
  ]);
  it.each([
    ["known order first, then by total and name", { order: ["tiny"] }, ["tiny", "gpt-5", "claude", "gpt-5-mini"], "tiny"],
    ["folds the smallest past the limit", { limit: 3 }, ["gpt-5", "claude", "(others)"], "(others)"],
  ] as const)("%s", (_name, options, series, foldedTiny) => {
    const picked = pickSeries(totals, options);
    expect(picked.series).toEqual(series);
    expect(picked.fold("tiny")).toBe(foldedTiny);
  });
});

describe("gap bins", () => {
  it("labels every bin, the open one last", () => {
    const labels = gapBinLabels();
    expect(labels).toHaveLength(GAP_BOUNDS_MS.length + 1);
    expect(labels.slice(0, 4)).toEqual(["≤ 100 ms", "≤ 250 ms", "≤ 500 ms", "≤ 1 s"]);
    expect(labels.at(-1)).toBe("> 1 h");
  });
});
