/**
 * Which part of the server this thread is. The listener's thread (serve.ts) takes every request
 * and ingests; the page renderer (render-pages.ts) is a worker thread of the same process running
 * a second Next that only renders pages, so rendering never holds the thread that ingests. The
 * renderer starts nothing of its own (no boot, no watchdog, no read worker): it reads and renders.
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

// Taken from process, not imported: this module is also bundled by Next (instrumentation.ts), whose
// bundler would follow an import of node:worker_threads' Worker.
const threads = () => process.getBuiltinModule("node:worker_threads");

/** What this thread was started with, when it is the page renderer; null on any other thread. */
export function pageRendererData(): PageRendererData | null {
  const { isMainThread, workerData } = threads();
  if (isMainThread) return null;
  return (workerData as Partial<PageRendererData> | null)?.role === PAGE_RENDERER_ROLE ? (workerData as PageRendererData) : null;
}

/** Whether this thread is the page renderer. */
export function isPageRenderer(): boolean {
  return pageRendererData() !== null;
}
