// The read worker's entry (lib/db/read-worker.ts) and the one file the prepare step
// (scripts/lib/prepare.mjs) bundles it into, outside Next's bundler, beside Next's build, for
// lib/server/off-thread.ts to start. Plain JavaScript: the prepare step imports it before
// anything is compiled (read-worker-bundle.d.mts types it for TypeScript).
export const READ_WORKER_ENTRY = "lib/db/read-worker.ts";
export const READ_WORKER_BUNDLE = ".next/radar-read-worker.mjs";
