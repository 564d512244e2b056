import { countNewEvents } from "@/lib/db/sources";
import { shared } from "@/lib/process-state";

/**
 * Keeps each source's usage (lib/db/sources.ts) counted: every few seconds, the events received
 * since the last count, in units of work of at most COUNT_CHUNK ids with the event loop free in
 * between. The storage quota therefore sees a source's usage as of a few seconds ago.
 */
// A unit of work of 1,000 ids takes about a millisecond on a large database (10,000 took 15–55 ms,
// the ingest thread held all along), and the whole count takes no longer in all.
const COUNT_CHUNK = 1_000;
const COUNT_EVERY_MS = 5_000;

const sharedForUsage = shared<{ usageCount?: NodeJS.Timeout }>("usageCount", () => ({}));

/** Counts everything received so far. */
export async function countUsage(): Promise<void> {
  while (await countNewEvents(COUNT_CHUNK)) await new Promise((resolve) => setImmediate(resolve));
}

export function startUsageCount(): void {
  if (sharedForUsage.usageCount) return;
  const loop = async () => {
    try {
      await countUsage();
    } catch (error) {
      process.stderr.write(`[radar] counting source usage failed: ${(error as Error).message}\n`);
    }
    sharedForUsage.usageCount = setTimeout(loop, COUNT_EVERY_MS);
    sharedForUsage.usageCount.unref();
  };
  void loop();
}
