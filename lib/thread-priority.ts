import fs from "node:fs";
import os from "node:os";

/**
 * Lowers the CPU priority of the calling thread alone, to `nice` (0 normal … 19 lowest). On Linux a
 * thread is a task with a nice value of its own, and setpriority takes its id, which
 * /proc/thread-self names. Raising a nice value needs no privilege; lowering it again would, so
 * this only ever lowers. Returns the thread's nice value afterwards, or null where the platform
 * cannot name the thread (no /proc) or refuses: the thread then runs as it did.
 */
export function lowerThreadPriority(nice: number): number | null {
  try {
    const tid = Number(fs.readlinkSync("/proc/thread-self").split("/").pop());
    if (!Number.isSafeInteger(tid) || tid <= 0) return null;
    if (os.getPriority(tid) < nice) os.setPriority(tid, nice);
    return os.getPriority(tid);
  } catch {
    return null;
  }
}
