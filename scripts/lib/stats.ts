// The benches' summaries of timings, one definition for all of them.

/**
 * The p-th percentile of ascending values, by nearest rank: the smallest value with at least p %
 * of the values at or below it (rank ⌈p/100 · n⌉), so the p95 of 20 timings is the 19th, not the
 * largest.
 */
export const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];

/** The middle value (the upper one of an even count). */
export const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
