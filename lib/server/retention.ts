import { config } from "@/lib/config";
import { pruneAlerts } from "@/lib/db/alerts";
import { pruneLimitSnapshots } from "@/lib/db/limits";
import { PRUNE_START, pruneEvents, type PruneCursor } from "@/lib/db/retention";
import { countUsage } from "./usage";
import { shared } from "@/lib/process-state";

/**
 * Prunes raw events older than RADAR_RETENTION_DAYS (lib/db/retention.ts says what stays), from
 * a timer like the watchdog's: a pass at start, then hourly. Each unit of work handles at most
 * BATCH rows and the pass yields to the event loop between them, so ingestion and the watchdog
 * never wait behind a long delete.
 */
const BATCH = 1_000;
const INTERVAL_MS = 60 * 60_000;
const DAY_MS = 24 * 60 * 60_000;

const sharedForRetention = shared<{ retention?: NodeJS.Timeout }>("retention", () => ({}));

/** One full pass; returns how many events it pruned. */
export async function pruneOnce(now = Date.now(), days = config().RADAR_RETENTION_DAYS, batch = BATCH): Promise<number> {
  const cutoff = now - days * DAY_MS;
  // Retention deletes only counted events (it subtracts them from their source's usage).
  await countUsage();
  let pruned = 0;
  let after: PruneCursor | null = PRUNE_START;
  while (after !== null) {
    const step = await pruneEvents(cutoff, after, batch);
    pruned += step.pruned;
    after = step.after;
    await new Promise((resolve) => setImmediate(resolve));
  }
  // Usage-window history goes with the events of its time; each window's current row stays.
  while ((await pruneLimitSnapshots(cutoff, batch)) === batch) await new Promise((resolve) => setImmediate(resolve));
  // So do alerts delivered or given up on, with their attempts (the audit log keeps its rows).
  while ((await pruneAlerts(cutoff, batch)) === batch) await new Promise((resolve) => setImmediate(resolve));
  return pruned;
}

export function startRetention(): void {
  if (sharedForRetention.retention) return;
  const loop = async () => {
    try {
      const pruned = await pruneOnce();
      if (pruned) process.stdout.write(`[radar] retention: pruned ${pruned} events older than ${config().RADAR_RETENTION_DAYS} days\n`);
    } catch (error) {
      process.stderr.write(`[radar] retention pass failed: ${(error as Error).message}\n`);
    }
    sharedForRetention.retention = setTimeout(loop, INTERVAL_MS);
    sharedForRetention.retention.unref();
  };
  // The first pass waits a moment so start-up and the first requests go first.
  sharedForRetention.retention = setTimeout(loop, 10_000);
  sharedForRetention.retention.unref();
}
