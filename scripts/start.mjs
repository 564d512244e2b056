#!/usr/bin/env node
// `npm start`: install what is missing, prepare the database, build if stale, serve.
// Configuration (all optional): HOST, PORT, DATABASE_URL, RADAR_INGEST_TOKEN. See README.
import { spawn } from "node:child_process";
import path from "node:path";
import { ensureBuilt, ensureGenerated, ensureInstalled, log, root, run } from "./lib/prepare.mjs";

const host = process.env.HOST || "127.0.0.1";
const port = process.env.PORT || "3000";
const started = Date.now();

try {
  ensureInstalled();
  ensureGenerated();
  // Fails fast, before a build, on a bad DATABASE_URL or an unwritable data folder.
  run(path.join(root, "node_modules", ".bin", "tsx"), [path.join(root, "scripts", "preflight.ts")]);
  ensureBuilt();
} catch (error) {
  log(`could not start: ${error.message}`);
  process.exit(1);
}

log(`ready to serve after ${((Date.now() - started) / 1000).toFixed(1)} s of preparation`);
const server = spawn(path.join(root, "node_modules", ".bin", "next"), ["start", "-H", host, "-p", port], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, HOST: host, PORT: port, NEXT_TELEMETRY_DISABLED: "1" },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
