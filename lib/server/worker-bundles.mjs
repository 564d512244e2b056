// The entries of the server's worker threads that run out of Next's sight, and the file the
// prepare step (scripts/lib/prepare.mjs) bundles each into, beside Next's build: the read worker
// (lib/db/read-worker.ts), which lib/server/off-thread.ts starts, and the WAL checkpointer
// (lib/db/checkpointer-thread.ts), which lib/server/listener/wal-checkpointer.ts starts. Plain
// JavaScript: the prepare step imports it before anything is compiled (worker-bundles.d.mts
// types it for TypeScript).
export const READ_WORKER_ENTRY = "lib/db/read-worker.ts";
export const READ_WORKER_BUNDLE = ".next/radar-read-worker.mjs";
export const CHECKPOINTER_ENTRY = "lib/db/checkpointer-thread.ts";
export const CHECKPOINTER_BUNDLE = ".next/radar-checkpointer.mjs";
