import type { Worker } from "node:worker_threads";
import { restarts, type RestartTiming } from "./restarts";

/**
 * A worker thread of the server that the listener's thread keeps running (the page renderer): up
 * once it says it is ready; ended when, up, it says nothing for `silentMs` (its thread stuck);
 * started again after it stops, later after each stop (restarts.ts). While it is down, the
 * listener's thread does its work itself (`meanwhile` says how, in the log).
 */
export interface WorkerSupervision<M> {
  /** Who it is, for the log: "the page renderer". */
  name: string;
  /** What happens while it is down, for the log: "pages render on the ingest thread". */
  meanwhile: string;
  start(): Worker;
  /** Whether `message` says it is ready. */
  isReady(message: M): boolean;
  onMessage?(message: M): void;
  /** It became ready; it stopped or went silent (once for each time it was up). */
  onUp?(): void;
  onDown?(): void;
  /** At each watch while it is up (the page renderer pings its thread, which answers). */
  onWatch?(worker: Worker): void;
}

export interface SupervisionTiming extends RestartTiming {
  /** How often it is watched. */
  watchMs: number;
  /** Up and silent this long, it is ended and restarted. */
  silentMs: number;
}

export interface SupervisedWorker {
  /** Whether it is up: ready, not silent, not stopped. */
  isUp(): boolean;
  /** Ends it for good. */
  stop(): Promise<void>;
}

export function supervise<M>(supervision: WorkerSupervision<M>, { watchMs, silentMs, ...restartTiming }: SupervisionTiming): SupervisedWorker {
  const { name, meanwhile } = supervision;
  const life = restarts(restartTiming);
  let current: Worker | null = null;
  let up = false;
  let stopped = false;
  let restart: NodeJS.Timeout | null = null;

  const down = () => {
    if (!up) return;
    up = false;
    supervision.onDown?.();
  };

  const start = () => {
    restart = null;
    if (stopped) return;
    const worker = supervision.start();
    current = worker;
    // Once given up on (silent), nothing it still sends counts.
    let givenUp = false;
    let heardAt = Date.now();
    const watch = setInterval(() => {
      if (!up) return;
      if (Date.now() - heardAt > silentMs) {
        givenUp = true;
        clearInterval(watch);
        process.stderr.write(`[radar] ${name} said nothing for ${((Date.now() - heardAt) / 1000).toFixed(1)} s: ending it; ${meanwhile} until it restarts\n`);
        down();
        void worker.terminate();
      } else supervision.onWatch?.(worker);
    }, watchMs);
    watch.unref();
    worker.on("message", (message: M) => {
      if (givenUp || stopped) return;
      heardAt = Date.now();
      if (supervision.isReady(message)) {
        life.ready();
        if (!up) {
          up = true;
          supervision.onUp?.();
        }
      }
      supervision.onMessage?.(message);
    });
    worker.on("error", (error) => process.stderr.write(`[radar] ${name} failed: ${error.stack ?? error.message}\n`));
    worker.once("exit", (code) => {
      clearInterval(watch);
      down();
      const wait = life.stopped();
      if (current === worker) current = null;
      if (stopped) return;
      process.stderr.write(`[radar] ${name} stopped (exit code ${code}): ${meanwhile} until it restarts in ${wait / 1000} s\n`);
      restart = setTimeout(start, wait);
      restart.unref();
    });
    // The listener's server keeps the process; a supervised worker never does on its own.
    worker.unref();
  };
  start();

  return {
    isUp: () => up,
    async stop() {
      stopped = true;
      if (restart) clearTimeout(restart);
      down();
      await current?.terminate();
    },
  };
}
