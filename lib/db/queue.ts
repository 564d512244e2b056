import { shared } from "@/lib/process-state";

/**
 * A queue of the process: functions run one after another in call order, each starting once the
 * previous one's promise has settled (whether it resolved or rejected).
 *
 * It is process-wide under `name` (lib/process-state.ts): Next's build and the listener's bundle
 * hold separate copies of every module, and a queue per copy would let their work interleave.
 */
export interface ProcessQueue {
  run<T>(fn: () => T | Promise<T>): Promise<T>;
  /** Whether `queued` (a promise `run` returned) is the last thing queued: nothing was queued after it. */
  isTail(queued: Promise<unknown>): boolean;
}

interface Slot {
  tail?: Promise<unknown>;
  last?: Promise<unknown>;
}

export function processQueue(name: string): ProcessQueue {
  const slot = shared(name, (): Slot => ({}));
  return {
    run<T>(fn: () => T | Promise<T>): Promise<T> {
      const result = (slot.tail ?? Promise.resolve()).then(fn);
      slot.tail = result.catch(() => undefined);
      slot.last = result;
      return result;
    },
    isTail: (queued) => slot.last === queued,
  };
}
