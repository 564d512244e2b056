import fs from "node:fs";
import path from "node:path";
import { Worker } from "node:worker_threads";
import type { CheckpointerData, CheckpointerMessage } from "@/lib/db/checkpointer";
import { checkpointsByThread, recordCheckpoint } from "@/lib/db/client";
import { CHECKPOINTER_BUNDLE } from "../worker-bundles.mjs";
import type { RestartTiming } from "./restarts";
import { supervise, type SupervisedWorker } from "./supervised-worker";

/**
 * The listener's side of the WAL checkpointer (lib/db/checkpointer.ts): a worker thread that
 * checkpoints the SQLite file every `everyMs`, so that no commit on this thread, the one that
 * ingests, has to. While it is starting, after it stopped, or once it went silent, this thread's
 * commits checkpoint as SQLite does by default: the WAL never grows without bound.
 */
export interface CheckpointerTiming extends RestartTiming {
  everyMs: number;
  /** A checkpointer that reported nothing for this long is ended (and restarted). */
  silentMs: number;
}

const TIMING: CheckpointerTiming = { everyMs: 250, silentMs: 15_000, restartFirstMs: 1_000, restartLastMs: 60_000, healthyMs: 60_000 };

/** The checkpointer of `file`, from the prepare step's bundle under `root`; null (commits checkpoint) where that was not built. */
export function startWalCheckpointer(root: string, file: string): SupervisedWorker | null {
  const script = path.join(root, CHECKPOINTER_BUNDLE);
  if (!fs.existsSync(script)) {
    process.stderr.write(`[radar] ${CHECKPOINTER_BUNDLE} is missing (npm start builds it): commits on the ingest thread checkpoint the WAL\n`);
    return null;
  }
  return superviseCheckpointer(script, file);
}

/** The checkpointer of `file` from `script` (its bundle, or a stand-in in tests). */
export function superviseCheckpointer(script: string, file: string, timing: Partial<CheckpointerTiming> = {}): SupervisedWorker {
  const { everyMs, silentMs, ...restartTiming } = { ...TIMING, ...timing };
  return supervise<CheckpointerMessage>(
    {
      name: "the WAL checkpointer",
      meanwhile: "commits on the ingest thread checkpoint",
      start: () => new Worker(script, { workerData: { file, everyMs } satisfies CheckpointerData }),
      isReady: (message) => "ready" in message,
      onMessage: (message) => {
        if ("checkpoint" in message) recordCheckpoint(message.checkpoint);
      },
      onUp: () => checkpointsByThread(file),
      onDown: () => checkpointsByThread(null),
    },
    { ...restartTiming, silentMs, watchMs: Math.min(silentMs, 1_000) },
  );
}
