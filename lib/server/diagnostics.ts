/**
 * The server's own memory, for an admin checking a leak and for the fuzz suite's "the heap comes
 * back after garbage collection" check. A collection runs first when the process was started
 * with `--expose-gc` (NODE_OPTIONS), so the figure is what is really held.
 */
export interface MemoryReport {
  collected: boolean;
  heapUsedBytes: number;
  rssBytes: number;
}

export function memoryReport(): MemoryReport {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const usage = process.memoryUsage();
  return { collected: gc !== undefined, heapUsedBytes: usage.heapUsed, rssBytes: usage.rss };
}
