/**
 * A queue of the process: functions run one after another in call order, each starting once the
 * previous one's promise has settled (whether it resolved or rejected).
 *
 * It lives on globalThis under `name`: Next's build gives instrumentation (the watchdog, alert
 * delivery, retention), the route handlers and the pages separate copies of every module, and a
 * queue per copy would let their work interleave.
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
  const slots = globalThis as unknown as Record<string, Slot | undefined>;
  const slot = (slots[name] ??= {});
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
