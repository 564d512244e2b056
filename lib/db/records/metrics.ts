import type { HistogramRow } from "@/lib/insights/metrics";
import { GAP_BOUNDS_MS } from "@/lib/insights/gaps";

/** /api/metrics' histograms from MetricTotal's rows per (kind, provider, bin), on either store. */
export function histogramOf(rows: { kind: string; provider: string; label: string; n: number; ms: number }[]): HistogramRow[] {
  const byLabels = new Map<string, HistogramRow>();
  for (const row of rows) {
    const key = `${row.kind}\0${row.provider}`;
    let entry = byLabels.get(key);
    if (!entry) {
      entry = { labels: { kind: row.kind, provider: row.provider }, bins: Array(GAP_BOUNDS_MS.length + 1).fill(0), sumMs: 0, count: 0 };
      byLabels.set(key, entry);
    }
    entry.bins[Number(row.label)] += row.n;
    entry.sumMs += row.ms;
    entry.count += row.n;
  }
  return [...byLabels.values()];
}
