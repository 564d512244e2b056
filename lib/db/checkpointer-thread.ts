import { parentPort, workerData } from "node:worker_threads";
import { runCheckpointer, type CheckpointerData } from "./checkpointer";

/**
 * The WAL checkpointer's thread (checkpointer.ts), started by lib/server/listener/wal-checkpointer.ts
 * from the file the prepare step builds (scripts/lib/prepare.mjs): a bundle of this file alone,
 * so the thread loads nothing but the SQLite driver.
 */
const { file, everyMs } = workerData as CheckpointerData;
runCheckpointer(file, everyMs, parentPort!);
