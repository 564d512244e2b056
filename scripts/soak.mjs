#!/usr/bin/env node
// `npm run soak`: long runs that are too slow for every commit. Runs the whole `npm test` N times
// in a row (default 3), optionally while a CPU-bound load keeps every core busy (--load), and
// prints each run's duration and result, then `soak: N passed, N failed` (runs, not tests).
// Each run fuzzes 10× longer (RADAR_FUZZ_ROUNDS) with its own seed (RADAR_FUZZ_SEED = 13 + run).
// Each run also takes every e2e/api suite and every Playwright spec a second time with the server
// on PostgreSQL (RADAR_E2E_POSTGRES_SUITES=all; `npm test` alone takes a subset of them).
//
//   npm run soak                      3 runs on an idle machine
//   npm run soak -- --runs 5 --load   5 runs with a busy loop on each core
//   npm run soak -- --load 1          ... on one core only
//   npm run soak -- --fault-rounds 5  5 kill -9 rounds in the fault suite instead of 3
//
// Each run also takes the long version of the fault suite (e2e/api/faults.test.ts): kill -9 of
// the server under 8 concurrent clients, --fault-rounds times (default 3), --fault-events
// acknowledged events per round (default 2000), with a new seed each run.
//
// The load is one child process per core, each a bounded busy loop: it stops by itself a little
// after the runs could possibly have ended (--load-minutes, default 25 per run), and is killed
// as soon as the runs end (or this script is interrupted).
import { spawn } from "node:child_process";
import os from "node:os";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");

function usage(message) {
  if (message) process.stderr.write(`soak: ${message}\n`);
  process.stderr.write("usage: npm run soak -- [--runs N] [--load [CORES]] [--load-minutes M] [--fault-rounds N] [--fault-events N]\n");
  process.exit(2);
}

const options = { runs: 3, load: 0, loadMinutes: 25, faultRounds: 3, faultEvents: 2000 };
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  const next = () => {
    const value = args[++i];
    if (value === undefined) usage(`${arg} needs a value`);
    return value;
  };
  if (arg === "--runs") options.runs = Number(next());
  else if (arg.startsWith("--runs=")) options.runs = Number(arg.slice(7));
  else if (arg === "--load") {
    // An optional core count may follow.
    if (args[i + 1] !== undefined && /^\d+$/.test(args[i + 1])) options.load = Number(args[++i]);
    else options.load = os.availableParallelism?.() ?? os.cpus().length;
  } else if (arg.startsWith("--load=")) options.load = Number(arg.slice(7));
  else if (arg === "--load-minutes") options.loadMinutes = Number(next());
  else if (arg === "--fault-rounds") options.faultRounds = Number(next());
  else if (arg === "--fault-events") options.faultEvents = Number(next());
  else if (arg === "-h" || arg === "--help") usage();
  else usage(`unknown option ${arg}`);
}
if (!Number.isInteger(options.runs) || options.runs < 1) usage("--runs must be a positive whole number");
if (!Number.isInteger(options.load) || options.load < 0) usage("--load takes a core count");
if (!(options.loadMinutes > 0)) usage("--load-minutes must be positive");
if (!Number.isInteger(options.faultRounds) || options.faultRounds < 1) usage("--fault-rounds must be a positive whole number");
if (!Number.isInteger(options.faultEvents) || options.faultEvents < 1) usage("--fault-events must be a positive whole number");

const log = (message) => process.stderr.write(`[soak] ${message}\n`);
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** One bounded busy loop per core; each stops by itself at its end time even if we die. */
const loaders = [];
function startLoad() {
  const budgetMs = Math.round(options.loadMinutes * 60_000 * options.runs);
  for (let i = 0; i < options.load; i++) {
    const child = spawn(process.execPath, ["-e", `const end = Date.now() + ${budgetMs}; while (Date.now() < end) {}`], { stdio: "ignore" });
    loaders.push(child);
  }
  log(`CPU load: ${options.load} busy loop(s), each ending by itself within ${Math.round(budgetMs / 60_000)} min`);
}
function stopLoad() {
  for (const child of loaders.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    stopLoad();
    process.exit(130);
  });
}
process.on("exit", stopLoad);

/** The long versions of the seeded suites (read by the tests themselves), seeded differently each run. */
function seededEnv(run) {
  return {
    RADAR_FAULT_ROUNDS: String(options.faultRounds),
    RADAR_FAULT_CLIENTS: "8",
    RADAR_FAULT_EVENTS: String(options.faultEvents),
    RADAR_FAULT_SEED: String(run * 7919),
    RADAR_FUZZ_ROUNDS: process.env.RADAR_FUZZ_ROUNDS ?? "10",
    RADAR_FUZZ_SEED: process.env.RADAR_FUZZ_SEED ?? String(13 + run),
    RADAR_E2E_POSTGRES_SUITES: "all",
  };
}

function runTests(run) {
  return new Promise((resolve) => {
    let tail = "";
    const child = spawn(process.execPath, [path.join(root, "scripts", "test.mjs")], {
      cwd: root,
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, ...seededEnv(run) },
    });
    child.stdout.on("data", (chunk) => {
      process.stdout.write(chunk);
      tail = (tail + chunk).slice(-4096);
    });
    child.on("exit", (code, signal) => {
      const line = /tests: (\d+) passed, (\d+) failed\s*$/.exec(tail);
      resolve({ code: code ?? (signal ? 128 : 1), line: line ? line[0].trim() : null });
    });
  });
}

if (options.load > 0) startLoad();
const results = [];
for (let run = 1; run <= options.runs; run++) {
  log(`run ${run}/${options.runs}${options.load ? ` under load (${options.load} busy core(s))` : ""}, ${options.faultRounds} kill -9 round(s) of ${options.faultEvents} events`);
  const t0 = Date.now();
  const { code, line } = await runTests(run);
  const ms = Date.now() - t0;
  const ok = code === 0;
  results.push({ run, ms, ok, line });
  log(`run ${run}/${options.runs}: ${ok ? "passed" : "FAILED"} in ${seconds(ms)} (${line ?? "no tests: line"})`);
}
stopLoad();

const passedRuns = results.filter((r) => r.ok).length;
console.log("");
console.log(`soak summary (${options.runs} run(s)${options.load ? `, ${options.load} busy core(s)` : ", no extra load"}):`);
for (const r of results) console.log(`  run ${r.run}: ${r.ok ? "passed" : "FAILED"}  ${seconds(r.ms).padStart(9)}  ${r.line ?? ""}`);
console.log(`soak: ${passedRuns} passed, ${results.length - passedRuns} failed`);
process.exit(passedRuns === results.length ? 0 : 1);
