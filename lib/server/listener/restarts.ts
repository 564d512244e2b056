/**
 * When a worker thread of the server that stopped starts again (the page renderer): after
 * `firstMs`, doubling with each stop to `lastMs`; one that ran `healthyMs` since it became ready
 * starts again as if it had never failed.
 */
export interface RestartTiming {
  restartFirstMs: number;
  restartLastMs: number;
  healthyMs: number;
}

export interface Restarts {
  /** The worker is ready. */
  ready(): void;
  /** It stopped: how long to wait before starting it again. */
  stopped(): number;
}

export function restarts({ restartFirstMs, restartLastMs, healthyMs }: RestartTiming, now: () => number = Date.now): Restarts {
  let readyAt: number | null = null;
  let failures = 0;
  return {
    ready: () => void (readyAt = now()),
    stopped() {
      if (readyAt !== null && now() - readyAt >= healthyMs) failures = 0;
      readyAt = null;
      return Math.min(restartLastMs, restartFirstMs * 2 ** failures++);
    },
  };
}
