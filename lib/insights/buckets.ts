/**
 * Time buckets for the insights charts. Buckets are aligned on the epoch (so in UTC): the same
 * range always yields the same buckets, which is what makes an incident permalink reproducible.
 */
export type BucketUnit = "minute" | "hour" | "day";

export const BUCKET_MS: Record<BucketUnit, number> = {
  minute: 60_000,
  hour: 3_600_000,
  day: 86_400_000,
};

/** Minutes up to 3 h (≤ 180 bars), hours up to 8 days (≤ 192 bars), days beyond. */
export function chooseBucket(spanMs: number): BucketUnit {
  if (spanMs <= 3 * BUCKET_MS.hour) return "minute";
  if (spanMs <= 8 * BUCKET_MS.day) return "hour";
  return "day";
}

export function bucketStart(at: number, bucketMs: number): number {
  return at - (((at % bucketMs) + bucketMs) % bucketMs);
}

/** Start of every bucket that overlaps [from, to). */
export function bucketStarts(from: number, to: number, bucketMs: number): number[] {
  const starts: number[] = [];
  for (let at = bucketStart(from, bucketMs); at < to; at += bucketMs) starts.push(at);
  return starts;
}

/**
 * Dense per-bucket counts from sparse GROUP BY rows: every bucket of the range appears (the
 * chart's x axis must not skip quiet minutes), every series key is present (0 when absent).
 */
export function fillBuckets(
  rows: readonly { bucket: number; series: string; count: number }[],
  starts: readonly number[],
  series: readonly string[],
): { at: number; counts: Record<string, number>; total: number }[] {
  const index = new Map(starts.map((at, i) => [at, i]));
  const filled = starts.map((at) => ({ at, counts: Object.fromEntries(series.map((s) => [s, 0])) as Record<string, number>, total: 0 }));
  for (const row of rows) {
    const i = index.get(row.bucket);
    if (i === undefined || !(row.series in filled[i].counts)) continue;
    filled[i].counts[row.series] += row.count;
    filled[i].total += row.count;
  }
  return filled;
}

/**
 * The series a stacked chart shows: known keys first in their given order, then the others by
 * total, descending; past `limit`, the smallest are folded into `otherLabel` so the legend
 * stays readable when splitting by model.
 */
export function pickSeries(
  totals: ReadonlyMap<string, number>,
  options: { order?: readonly string[]; limit?: number; otherLabel?: string } = {},
): { series: string[]; fold: (key: string) => string } {
  const { order = [], limit = 8, otherLabel = "(others)" } = options;
  const known = order.filter((key) => totals.has(key));
  const rest = [...totals.keys()].filter((key) => !order.includes(key)).sort((a, b) => totals.get(b)! - totals.get(a)! || a.localeCompare(b));
  const all = [...known, ...rest];
  if (all.length <= limit) return { series: all, fold: (key) => key };
  const kept = new Set(all.slice(0, limit - 1));
  return { series: [...kept, otherLabel], fold: (key) => (kept.has(key) ? key : otherLabel) };
}
