import pg from "pg";
import { CLIENT_KEEPALIVE, closeQuietly, DEAD_PEER_SETTINGS } from "./dedicated";
import { DATABASE_LOCKS } from "./locks";

/**
 * One leader among several instances on one PostgreSQL (the watchdog's): leadership is a
 * session-level advisory lock held on a connection of its own, so it dies with that connection.
 * A leader whose process is killed (kill -9 closes its socket) or whose connection breaks loses
 * the lock at once on the server's side. Its lease: the leader checks its connection every
 * interval and steps down when it breaks or does not answer within CHECK_INTERVALS intervals;
 * standbys try the lock every interval, and at once when a leader that stops cleanly says it let go.
 * A killed leader's lock is free at once (its socket closed), so a standby takes over within about
 * an interval; the check's longer bound only keeps a busy leader (a slow answer, a blocked event
 * loop) from handing over for nothing, and still steps a leader whose connection hangs down before
 * the server's keepalive (DEAD_PEER_SETTINGS) frees its lock for another.
 *
 * How the watchdog uses it (lib/server/watchdog.ts): it runs startWatchdog's loop
 * only between onLeader and onStepDown. A leader that lost its connection may still be in the
 * middle of a pass when the next one starts its first, so a pass must be harmless to run twice,
 * and it is only if the database, not the process, decides what a deadline does:
 * - the pass's unit of work (pipeline.ts tickThreads → touchThreads → runBatch) must lock each due
 *   thread row (`SELECT … FROM "Thread" WHERE id = ANY($1) FOR UPDATE`) and re-read its state and
 *   wakeAt under that lock, ticking only when wakeAt <= now still holds: the second pass then
 *   finds the deadline already applied (wakeAt moved on) and changes nothing;
 * - what a deadline emits stays keyed uniquely, as it is today: the interrupt it asks for is a
 *   Directive unique on ("threadId", "dedupeKey") (directives.ts insertDirective inserts nothing
 *   for a key it already holds, so the directive is sent once), and the episode it ends is unique
 *   on ("threadId", seq), with its rollup facts written in the same unit of work;
 * - closeQuietIncidents must close an incident with `WHERE "closedAt" IS NULL` in its UPDATE so a
 *   second pass closes nothing twice, and the quarantine counter (tickFailures in pipeline.ts) is
 *   only an optimisation: a new leader starts counting again.
 */
export interface Leadership {
  /** Whether this contender holds the lock now. */
  isLeader(): boolean;
  /**
   * Settles once the first try for the lock has ended, won (onLeader has been called), lost or
   * failed (it is retried as ever): a start can wait for what its leadership does first.
   */
  readonly firstAttempt: Promise<void>;
  /** Stops contending; a leader steps down first, then lets go so a standby takes over at once. */
  stop(): Promise<void>;
}

export interface LeaderOptions {
  /** The lock's key: the same number in every instance that contends for this role. */
  key: number;
  /** Called when this contender becomes leader. */
  onLeader: () => void;
  /** Called when it stops being leader: its connection broke, or stop() was called. */
  onStepDown: () => void;
  /** How often the leader checks its connection and standbys retry (the watchdog's: RADAR_WATCHDOG_LEASE_MS). */
  intervalMs: number;
  /** The clock, for tests. */
  timers?: Timers;
  /** Called with what went wrong when a check or an attempt fails (it is retried). */
  onError?: (error: Error) => void;
}

export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  setTimeout: (callback, ms) => {
    const handle = setTimeout(callback, ms);
    handle.unref?.();
    return handle;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** The watchdog's lock key (locks.ts keeps every whole-database lock's number). */
export const WATCHDOG_LOCK = DATABASE_LOCKS.watchdog;

/** How many intervals a leader's check may take before it steps down (3 s < the keepalive's 8 s). */
const CHECK_INTERVALS = 3;

/** Contends for leadership on `url` until stop(); the first attempt starts at once. */
export function contendForLeadership(url: string, options: LeaderOptions): Leadership {
  const interval = options.intervalMs;
  const timers = options.timers ?? realTimers;
  const channel = `radar_leader_${options.key}`;
  let client: pg.Client | null = null;
  let leader = false;
  let stopped = false;
  let timer: unknown = null;
  /** The pass under way, so stop() waits for it and passes never overlap. */
  let running: Promise<void> = Promise.resolve();
  let firstAttemptEnded!: () => void;
  const firstAttempt = new Promise<void>((resolve) => (firstAttemptEnded = resolve));

  const stepDown = () => {
    if (!leader) return;
    leader = false;
    options.onStepDown();
  };

  /** Forgets a connection that failed: the server has released its lock (or will, on its own). */
  const drop = (error?: Error) => {
    const lost = client;
    client = null;
    stepDown();
    if (error) options.onError?.(error);
    if (lost) void closeQuietly(lost);
  };

  const connect = async (): Promise<pg.Client> => {
    const fresh = new pg.Client({ connectionString: url, application_name: "radar-leader", ...CLIENT_KEEPALIVE, query_timeout: interval * CHECK_INTERVALS, connectionTimeoutMillis: interval * 5 });
    // A broken socket is noticed here as soon as the driver sees it, not only at the next check.
    fresh.on("error", (error) => {
      if (client === fresh) drop(error);
    });
    fresh.on("end", () => {
      if (client === fresh) drop(new Error("the leader connection ended"));
    });
    fresh.on("notification", () => {
      if (!leader) schedule(0);
    });
    try {
      await fresh.connect();
      // A leader whose host vanishes frees the lock within seconds (see DEAD_PEER_SETTINGS).
      await fresh.query(DEAD_PEER_SETTINGS);
      await fresh.query(`LISTEN "${channel}"`);
      return fresh;
    } catch (error) {
      // Not yet `client`: nothing else would ever close it.
      await closeQuietly(fresh);
      throw error;
    }
  };

  const pass = async () => {
    try {
      client ??= await connect();
      if (leader) {
        // The lease: a leader whose connection answers still holds its session's lock.
        await client.query("SELECT 1");
        return;
      }
      const { rows } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [options.key]);
      if (rows[0].locked && !stopped) {
        leader = true;
        options.onLeader();
      }
    } catch (error) {
      drop(error as Error);
    } finally {
      firstAttemptEnded();
    }
  };

  const schedule = (ms: number) => {
    if (stopped) return;
    if (timer !== null) timers.clearTimeout(timer);
    timer = timers.setTimeout(() => {
      timer = null;
      running = running.then(pass).then(() => schedule(interval));
    }, ms);
  };

  schedule(0);

  return {
    isLeader: () => leader,
    firstAttempt,
    async stop() {
      stopped = true;
      // A contender stopped before it ever tried has nothing to wait for.
      firstAttemptEnded();
      if (timer !== null) timers.clearTimeout(timer);
      timer = null;
      await running;
      const held = client;
      client = null;
      if (!held) return;
      held.removeAllListeners();
      held.on("error", () => undefined);
      try {
        if (leader) {
          // Step down before letting go, so two leaders never act at once on a clean handover.
          stepDown();
          await held.query("SELECT pg_advisory_unlock($1)", [options.key]);
          await held.query(`NOTIFY "${channel}"`);
        }
      } catch {
        // Closing the connection releases the lock all the same.
      } finally {
        await closeQuietly(held);
      }
    },
  };
}
