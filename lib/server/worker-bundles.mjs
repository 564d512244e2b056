// The entry of the server's worker thread that runs out of Next's sight, and the file the prepare
// step (scripts/lib/prepare.mjs) bundles it into, in the project's own build folder: the read worker
// (lib/db/read-worker.ts), which lib/server/off-thread.ts starts. Plain JavaScript: the prepare
// step imports it before anything is compiled (worker-bundles.d.mts types it for TypeScript).
export const READ_WORKER_ENTRY = "lib/db/read-worker.ts";
export const READ_WORKER_BUNDLE = ".radar/build/radar-read-worker.mjs";
