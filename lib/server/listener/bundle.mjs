// The ingestion listener's entry (lib/server/listener/main.ts) and the one file the prepare step
// (scripts/lib/prepare.mjs) bundles it into, in the project's own build folder (.radar/build,
// never Next's); `npm start` and the test server run it with node. Plain JavaScript: the prepare step imports it before anything is
// compiled (bundle.d.mts types it for TypeScript).
export const LISTENER_ENTRY = "lib/server/listener/main.ts";
export const LISTENER_BUNDLE = ".radar/build/radar-server.mjs";
