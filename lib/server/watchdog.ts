import { dueThreadIds, nextWakeAt } from "@/lib/db/thread-state";
import { nextIncidentQuietEnd } from "@/lib/db/incidents";
import { incidentSettings } from "@/lib/config";
import { closeQuietIncidents, tickThreads } from "./pipeline";

/**
 * Deadlines pass in silence (a 3600 s Retry-After sends nothing for an hour), so the server
 * applies the engine's tick itself. Wake times live in the database (Thread.wakeAt), so the
 * watchdog resumes exactly after a restart. Nothing wakes it early: it sleeps until the next
 * wake time but never longer than MAX_SLEEP_MS, so new work with an earlier wake time waits at
 * most that long; a full batch means more is due, so it goes again at once. One thread that
 * throws never holds back the others: tickThreads then ticks each in its own unit of work and
 * quarantines a thread that keeps failing.
 */
const MAX_SLEEP_MS = 1_000;
const BATCH = 200;

const globalForWatchdog = globalThis as unknown as { __radarWatchdog?: NodeJS.Timeout };

export function startWatchdog(): void {
  if (globalForWatchdog.__radarWatchdog) return;
  const loop = async () => {
    let delay = MAX_SLEEP_MS;
    try {
      const now = Date.now();
      // Bounded per pass so one pass never holds the database for long.
      const due = await dueThreadIds(now, BATCH);
      if (due.length) await tickThreads(due, now);
      // Incidents close in silence too: after their quiet period.
      const quietEnd = await nextIncidentQuietEnd(incidentSettings().quietMs);
      if (quietEnd != null && quietEnd <= now) await closeQuietIncidents(now);
      const next = due.length === BATCH ? now : await nextWakeAt();
      if (next != null) delay = Math.min(MAX_SLEEP_MS, Math.max(10, next - Date.now()));
    } catch (error) {
      process.stderr.write(`[radar] watchdog pass failed: ${(error as Error).message}\n`);
    }
    globalForWatchdog.__radarWatchdog = setTimeout(loop, delay);
    globalForWatchdog.__radarWatchdog.unref();
  };
  void loop();
}
