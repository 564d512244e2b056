import { Worker } from "node:worker_threads";
import type { CheckpointerMessage } from "@/lib/db/checkpointer";
import { checkpointsByThread, recordCheckpoint } from "@/lib/db/client";
import { restarts, type RestartTiming } from "./restarts";
import { WAL_CHECKPOINTER_ROLE, type WalCheckpointerData } from "./role";

/**
 * The listener's side of the WAL checkpointer (lib/db/checkpointer.ts): a worker thread that
 * checkpoints the SQLite file every `everyMs`, so that no commit on this thread, the one that
 * ingests, ever does. While it is starting, after it stopped, or once it has gone silent, this
 * thread's commits checkpoint as SQLite does by default: the WAL never grows without bound.
 */
export interface CheckpointerTiming extends RestartTiming {
  everyMs: number;
  /** A checkpointer that reported nothing for this long is ended (and restarted). */
  silentMs: number;
}

const TIMING: CheckpointerTiming = { everyMs: 250, silentMs: 15_000, restartFirstMs: 1_000, restartLastMs: 60_000, healthyMs: 60_000 };

export interface WalCheckpointer {
  /** Whether the checkpointer thread checkpoints now. */
  running(): boolean;
  /** Ends it for good (commits checkpoint again). */
  stop(): Promise<void>;
}

/** Starts the checkpointer of `file` from `script` (the server's bundle: main.ts runs it as the checkpointer). */
export function startWalCheckpointer(script: string, file: string, timing: Partial<CheckpointerTiming> = {}): WalCheckpointer {
  const { everyMs, silentMs, ...restartTiming } = { ...TIMING, ...timing };
  const life = restarts(restartTiming);
  let worker: Worker | null = null;
  let stopped = false;

  const start = () => {
    const data: WalCheckpointerData = { role: WAL_CHECKPOINTER_ROLE, file, everyMs };
    const current = new Worker(script, { workerData: data });
    worker = current;
    let heardAt = Date.now();
    const watch = setInterval(() => {
      if (Date.now() - heardAt <= silentMs) return;
      process.stderr.write(`[radar] the WAL checkpointer reported nothing for ${((Date.now() - heardAt) / 1000).toFixed(1)} s: ending it; commits checkpoint meanwhile\n`);
      checkpointsByThread(null);
      void current.terminate();
    }, Math.min(silentMs, 1_000));
    watch.unref();
    current.on("message", (message: CheckpointerMessage) => {
      heardAt = Date.now();
      if ("ready" in message) {
        life.ready();
        checkpointsByThread(file);
      } else recordCheckpoint(message.checkpoint);
    });
    current.on("error", (error) => process.stderr.write(`[radar] the WAL checkpointer failed: ${error.stack ?? error.message}\n`));
    current.once("exit", (code) => {
      clearInterval(watch);
      checkpointsByThread(null);
      const wait = life.stopped();
      if (stopped) return;
      process.stderr.write(`[radar] the WAL checkpointer stopped (exit code ${code}): commits checkpoint until it restarts in ${wait / 1000} s\n`);
      setTimeout(start, wait).unref();
    });
    // The listener's server keeps the process; the checkpointer never does on its own.
    current.unref();
  };
  start();

  return {
    running: () => life.isReady(),
    async stop() {
      stopped = true;
      await worker?.terminate();
    },
  };
}
