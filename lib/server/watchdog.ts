import { dueThreadIds, nextWakeAt } from "@/lib/db/thread-state";
import { nextIncidentQuietEnd } from "@/lib/db/incidents";
import { contendForLeadership, WATCHDOG_LOCK, type Leadership } from "@/lib/db/postgres/leader";
import { currentStore } from "@/lib/db/store";
import { config, incidentSettings } from "@/lib/config";
import { closeQuietIncidents, tickThreads } from "./pipeline";
import { beforeShutdown } from "./shutdown";
import { shared } from "@/lib/process-state";

/**
 * Deadlines pass in silence (a 3600 s Retry-After sends nothing for an hour), so the server
 * applies the engine's tick itself. Wake times live in the database (Thread.wakeAt), so the
 * watchdog resumes exactly after a restart. Nothing wakes it early: it sleeps until the next
 * wake time but never longer than MAX_SLEEP_MS, so new work with an earlier wake time waits at
 * most that long; a full batch means more is due, so it goes again at once. One thread that
 * throws never holds back the others: tickThreads then ticks each in its own unit of work and
 * quarantines a thread that keeps failing.
 *
 * Several instances on one PostgreSQL database: only the leader runs it (lib/db/postgres/leader.ts,
 * an advisory lock with a lease of RADAR_WATCHDOG_LEASE_MS, a second by default). A leader that
 * stops gracefully lets go before its process exits (lib/server/shutdown.ts), so a standby takes
 * over at once; a killed one is replaced within about a lease. A new leader's first pass starts at once and
 * fires what fell due while nobody led. A leader that lost its connection mid-pass may finish that
 * pass while the next leader runs its first: the database makes the second harmless (each due
 * thread is locked and its wake time read again under the lock; directives and episodes are
 * unique), so nothing fires twice. On SQLite the one process runs it.
 */
const MAX_SLEEP_MS = 1_000;
const BATCH = 200;
/**
 * Due threads ticked per unit of work, the event loop free in between: a full batch in one unit
 * (many Retry-Afters ending at once, or the catching up after a restart) held the thread that
 * ingests 15–38 ms; in units of 10, 0.6–2.9 ms each (median; `npx tsx scripts/profile-watchdog.ts`).
 */
export const TICK_CHUNK = 10;

interface Watchdog {
  timer: NodeJS.Timeout | null;
  /** Bumped whenever the loop stops, so a pass still under way then schedules no next one. */
  run: number;
  running: boolean;
  /** The pass under way (or the last one): a leader letting go waits for it. */
  pass: Promise<unknown>;
  leadership: Leadership | null;
  /** Settles once a pass of this instance found fewer due threads than a pass takes (or failed): caught up. */
  caughtUp: Promise<void>;
  markCaughtUp: () => void;
}

const sharedForWatchdog = shared<{ watchdog?: Watchdog }>("watchdog", () => ({}));

/**
 * Starts the watchdog; resolves once it has caught up with what fell due while the radar was down
 * (a pass found fewer due threads than one pass takes, or failed), or once this instance's first
 * try for the leadership did not win: the instance that leads does the catching up. The start
 * (boot.ts) waits for it, so the first answers after a restart never show a deadline or a stop's
 * grace that passed unnoticed during the downtime.
 */
export function startWatchdog(): Promise<void> {
  if (sharedForWatchdog.watchdog) return Promise.resolve();
  let markCaughtUp!: () => void;
  const caughtUp = new Promise<void>((resolve) => (markCaughtUp = resolve));
  const watchdog: Watchdog = { timer: null, run: 0, running: false, pass: Promise.resolve(), leadership: null, caughtUp, markCaughtUp };
  sharedForWatchdog.watchdog = watchdog;
  if (currentStore() !== "postgres") {
    runLoop(watchdog);
    return watchdog.caughtUp;
  }
  const settings = config();
  const leadership = contendForLeadership(settings.DATABASE_URL, {
    key: WATCHDOG_LOCK,
    intervalMs: settings.RADAR_WATCHDOG_LEASE_MS,
    onLeader: () => {
      process.stdout.write(`[radar] watchdog: this instance (pid ${process.pid}) leads; it runs the watchdog\n`);
      runLoop(watchdog);
    },
    onStepDown: () => {
      process.stdout.write(`[radar] watchdog: this instance (pid ${process.pid}) stepped down\n`);
      stopLoop(watchdog);
    },
    onError: (error) => process.stderr.write(`[radar] watchdog leadership: ${error.message} (retried)\n`),
  });
  watchdog.leadership = leadership;
  // On a graceful stop the pass under way ends before the lock is let go, and stepping down
  // (logged above) comes before it too, so the standby that takes over never acts alongside.
  beforeShutdown(async () => {
    stopLoop(watchdog);
    await watchdog.pass;
    await leadership.stop();
  });
  // onLeader runs inside the first try: by its end, a leader's first pass is under way. A first
  // try that lost leaves the catching up to the instance that leads.
  return leadership.firstAttempt.then(() => (watchdog.running ? watchdog.caughtUp : undefined));
}

/**
 * Whether this instance runs the watchdog now (the radar_watchdog_leader gauge): on SQLite the
 * one process always does; on PostgreSQL only the leader among the instances.
 */
export function leadsWatchdog(): boolean {
  return sharedForWatchdog.watchdog?.running ?? false;
}

function runLoop(watchdog: Watchdog): void {
  if (watchdog.running) return;
  watchdog.running = true;
  const run = ++watchdog.run;
  const loop = async () => {
    const pass = onePass();
    watchdog.pass = pass;
    const { delay, full } = await pass;
    // A full pass means more is due: the catching up goes on at once.
    if (!full) watchdog.markCaughtUp();
    if (run !== watchdog.run) return;
    watchdog.timer = setTimeout(loop, delay);
    watchdog.timer.unref();
  };
  void loop();
}

/** One pass over the due threads and quiet incidents; resolves to how long to sleep before the next, and whether it took a full batch of due threads. */
async function onePass(): Promise<{ delay: number; full: boolean }> {
  let delay = MAX_SLEEP_MS;
  let full = false;
  try {
    const now = Date.now();
    // Bounded per pass so one pass never holds the database for long.
    const due = await dueThreadIds(now, BATCH);
    await tickInChunks(due, now);
    // Incidents close in silence too: after their quiet period.
    const quietEnd = await nextIncidentQuietEnd(incidentSettings().quietMs);
    if (quietEnd != null && quietEnd <= now) await closeQuietIncidents(now);
    full = due.length === BATCH;
    const next = full ? now : await nextWakeAt();
    if (next != null) delay = Math.min(MAX_SLEEP_MS, Math.max(10, next - Date.now()));
  } catch (error) {
    process.stderr.write(`[radar] watchdog pass failed: ${(error as Error).message}\n`);
  }
  return { delay, full };
}

/** Ticks `due` TICK_CHUNK threads per unit of work, letting the event loop turn between them. */
async function tickInChunks(due: number[], now: number): Promise<void> {
  for (let i = 0; i < due.length; i += TICK_CHUNK) {
    if (i > 0) await new Promise((resolve) => setImmediate(resolve));
    await tickThreads(due.slice(i, i + TICK_CHUNK), now);
  }
}

function stopLoop(watchdog: Watchdog): void {
  // Whoever leads next catches up: a start waiting on this one waits no longer.
  watchdog.markCaughtUp();
  watchdog.running = false;
  watchdog.run++;
  if (watchdog.timer) clearTimeout(watchdog.timer);
  watchdog.timer = null;
}
