/**
 * Waits for `work` at most `ms`: `{ settled: true, value }` when it resolved in time, `{ settled:
 * false }` when the time ran out first (the work goes on, unwatched; its later rejection is
 * handled here). A rejection in time rejects. The timer is cleared either way and never keeps the
 * process alive: the one shape for every bounded wait (a start's catch-up, a drained request
 * body, a connection's check, a bench's aborted readers).
 */
export async function within<T>(work: Promise<T>, ms: number): Promise<{ settled: true; value: T } | { settled: false }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<{ settled: false }>((resolve) => {
    timer = setTimeout(() => resolve({ settled: false }), ms);
    timer.unref?.();
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work.then((value) => ({ settled: true as const, value })), late]);
  } finally {
    clearTimeout(timer);
  }
}
