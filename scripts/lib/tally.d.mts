export type Tally = { passed: number; failed: number; failures: string[] };
/** Counts a vitest JSON report; a file that failed outside its tests, and each unhandled error, count as one failure. */
export function tallyVitest(report: unknown, status: number | null, unhandledErrors?: string[]): Tally;
/** Counts a Playwright JSON report; each error outside a test counts as one failure. */
export function tallyPlaywright(report: unknown, status: number | null): Tally;
