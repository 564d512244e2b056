#!/usr/bin/env node
// `npm start`: install what is missing, prepare the database, build if stale, serve.
// Configuration (all optional): HOST, PORT, DATABASE_URL, RADAR_INGEST_TOKEN, RADAR_PUBLIC_URL (required
// when HOST is not loopback; scripts/preflight.ts enforces it), … See README.
import { spawn, spawnSync } from "node:child_process";
import crypto from "node:crypto";
import path from "node:path";
import { isLoopbackInterface, isWildcardInterface } from "./lib/loopback.mjs";
import { LISTENER_BUNDLE } from "../lib/server/listener/bundle.mjs";
import { ensureBuilt, ensureGenerated, ensureInstalled, log, root } from "./lib/prepare.mjs";

const host = process.env.HOST || "127.0.0.1";
const port = process.env.PORT || "3000";
const started = Date.now();

try {
  ensureInstalled();
  ensureGenerated();
  // Fails fast, before a build, on a bad DATABASE_URL or an unwritable data folder; it prints its own one-line reason.
  const preflight = spawnSync(path.join(root, "node_modules", ".bin", "tsx"), [path.join(root, "scripts", "preflight.ts")], { cwd: root, stdio: "inherit" });
  if (preflight.status !== 0) process.exit(1);
  ensureBuilt();
} catch (error) {
  log(`could not start: ${error.message}`);
  process.exit(1);
}

// `npm start -- --demo`: the simulated fleet drives this server through its public API. It needs
// a valid ingest token: the configured one, or a fresh one the server adds to its first source.
const demo = process.argv.slice(2).includes("--demo");
const token = process.env.RADAR_INGEST_TOKEN || (demo ? `rr_demo_${crypto.randomBytes(18).toString("base64url")}` : "");

log(`ready to serve after ${((Date.now() - started) / 1000).toFixed(1)} s of preparation`);
const children = [];
// The ingestion listener in front of Next (lib/server/listener), on HOST:PORT.
const server = spawn(process.execPath, [path.join(root, LISTENER_BUNDLE)], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, HOST: host, PORT: port, NEXT_TELEMETRY_DISABLED: "1", ...(token ? { RADAR_INGEST_TOKEN: token } : {}) },
});
children.push(server);
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => children.forEach((child) => child.kill(signal)));
server.on("exit", (code, signal) => {
  children.forEach((child) => child.kill("SIGTERM"));
  process.exit(code ?? (signal ? 1 : 0));
});

if (demo) {
  // An address the Host allow-list answers to: loopback when the server listens there too.
  const wildcard = isWildcardInterface(host);
  const loopback = wildcard || isLoopbackInterface(host);
  const url = loopback ? `http://${wildcard ? "127.0.0.1" : host}:${port}` : process.env.RADAR_PUBLIC_URL;
  await waitForHealth(url);
  log(`demo: a simulated fleet now reports to ${url} — open it in a browser`);
  // The token goes through a pipe: a command line is readable by every local user, and an
  // environment by every process of ours (/proc/<pid>/cmdline, environ).
  const { RADAR_TOKEN: _token, RADAR_INGEST_TOKEN: _ingestToken, ...demoEnv } = process.env;
  const simulator = spawn(path.join(root, "node_modules", ".bin", "tsx"), [path.join(root, "scripts", "demo", "cli.ts"), "--server", url, "--token-stdin"], {
    cwd: root,
    stdio: ["pipe", "inherit", "inherit"],
    env: demoEnv,
  });
  simulator.stdin.end(`${token}\n`);
  children.push(simulator);
}

async function waitForHealth(url) {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${url}/api/health`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  log("demo: the server did not become healthy in 60 s; not starting the simulator");
}
