/**
 * Bins for advised delays and actual retry gaps, shared by the insights histogram and the
 * Prometheus histograms so both read the same way. Upper bounds, inclusive, in milliseconds;
 * a last open bin holds everything above an hour.
 */
export const GAP_BOUNDS_MS = [
  100, 250, 500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000,
] as const;

function short(ms: number): string {
  if (ms < 1_000) return `${ms} ms`;
  if (ms < 60_000) return `${ms / 1_000} s`;
  if (ms < 3_600_000) return `${ms / 60_000} min`;
  return `${ms / 3_600_000} h`;
}

/** "≤ 100 ms", "≤ 2 s", …, "> 1 h": one label per bin, the open bin last. */
export function gapBinLabels(): string[] {
  return [...GAP_BOUNDS_MS.map((ms) => `≤ ${short(ms)}`), `> ${short(GAP_BOUNDS_MS[GAP_BOUNDS_MS.length - 1])}`];
}
