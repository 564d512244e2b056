/**
 * Which part of the server this thread is. The listener's thread (serve.ts) takes every request
 * and ingests; the page renderer (render-pages.ts) is a worker thread of the same process running
 * a second Next that only renders pages, so rendering never holds the thread that ingests. The
 * renderer starts nothing of its own (no boot, no watchdog, no read worker): it reads and renders.
 * The WAL checkpointer (lib/db/checkpointer.ts, wal-checkpointer.ts) is another: it copies the
 * SQLite WAL back into the database file, so no commit on the ingest thread does.
 */
export const PAGE_RENDERER_ROLE = "radar-page-renderer";

export interface PageRendererData {
  role: typeof PAGE_RENDERER_ROLE;
  /** The Unix socket it listens on, in a folder only this process's user can enter. */
  socketPath: string;
  hostname: string;
  port: number;
}

/** Between the renderer and the listener's thread: its readiness, and the heartbeat (the listener pings, the renderer pongs). */
export interface RendererMessage {
  ready?: true;
  ping?: true;
  pong?: true;
}

export const WAL_CHECKPOINTER_ROLE = "radar-wal-checkpointer";

export interface WalCheckpointerData {
  role: typeof WAL_CHECKPOINTER_ROLE;
  /** The SQLite database file, opened and migrated by the listener's thread. */
  file: string;
  /** How often it checkpoints. */
  everyMs: number;
}

// Taken from process, not imported: this module is also bundled by Next (instrumentation.ts), whose
// bundler would follow an import of node:worker_threads' Worker.
const threads = () => process.getBuiltinModule("node:worker_threads");

/** What this thread was started with, when it is the part of the server `role` names; null on any other thread. */
function startedAs<T extends { role: string }>(role: T["role"]): T | null {
  const { isMainThread, workerData } = threads();
  if (isMainThread) return null;
  return (workerData as { role?: unknown } | null)?.role === role ? (workerData as T) : null;
}

/** What this thread was started with, when it is the page renderer; null on any other thread. */
export function pageRendererData(): PageRendererData | null {
  return startedAs<PageRendererData>(PAGE_RENDERER_ROLE);
}

/** Whether this thread is the page renderer. */
export function isPageRenderer(): boolean {
  return pageRendererData() !== null;
}

/** What this thread was started with, when it is the WAL checkpointer; null on any other thread. */
export function walCheckpointerData(): WalCheckpointerData | null {
  return startedAs<WalCheckpointerData>(WAL_CHECKPOINTER_ROLE);
}
