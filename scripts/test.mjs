#!/usr/bin/env node
// `npm test`: every suite — unit and integration (vitest, against real SQLite files and a real
// running server; a subset again with the server on PostgreSQL, vitest project postgres-e2e) and
// browser tests (Playwright in a real Chromium; a few again on PostgreSQL) — then one closing line:
// `tests: N passed, N failed`, summed over both runners. Exits non-zero on any failure.
// Before that line: the time budget — how long each part took and the slowest files and tests
// (from the runners' JSON reports), so a suite that grows slow is seen before it times out.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ensureChromium } from "./lib/chromium.mjs";
import { freePort } from "./lib/port.mjs";
import { log, prepare, root } from "./lib/prepare.mjs";
import { tallyPlaywright, tallyVitest } from "./lib/tally.mjs";

const reports = fs.mkdtempSync(path.join(os.tmpdir(), "radar-test-"));
let passed = 0;
let failed = 0;
/** Failures no test owns (a file's beforeAll, a runner's own error), named above the closing line. */
const unowned = [];
/** Each Playwright run's JSON report, for the closing counts and the time budget. */
const playwrightJsons = [];
/** [part, milliseconds] in the order they ran. */
const parts = [];
const startedAt = Date.now();

function timed(part, work) {
  const t0 = Date.now();
  try {
    return work();
  } finally {
    parts.push([part, Date.now() - t0]);
  }
}

function finish(code) {
  try {
    printBudget();
  } catch (error) {
    log(`could not print the time budget: ${error.message}`);
  }
  for (const failure of unowned) log(`counted as failed: ${failure}`);
  console.log(`tests: ${passed} passed, ${failed} failed`);
  process.exit(code);
}

try {
  timed("prepare (install, generate, build)", () => prepare());
} catch (error) {
  log(`could not prepare the project: ${error.message}`);
  failed += 1;
  finish(1);
}

const chromium = timed("browser check", () => ensureChromium());

// 0. The whole tree type-checks (the build skips it; this is where it is enforced).
const typecheck = timed("type check (tsc)", () => spawnSync(path.join(root, "node_modules", ".bin", "tsc"), ["--noEmit", "-p", "."], { cwd: root, stdio: "inherit" }));
if (typecheck.status === 0) passed += 1;
else {
  log("type check failed (tsc --noEmit)");
  failed += 1;
}

// 1. vitest: unit suites and the API integration suites (e2e/api) that start the built server.
const vitestJson = path.join(reports, "vitest.json");
// Each file's whole time (imports and hooks too) and the errors no test owns: scripts/lib/vitest-budget-reporter.ts.
const vitestBudgetJson = path.join(reports, "vitest-budget.json");
const vitest = timed("vitest (unit + API integration)", () => spawnSync(
  path.join(root, "node_modules", ".bin", "vitest"),
  ["run", "--config", "scripts/vitest.config.ts", "--reporter=default", "--reporter=json", `--outputFile.json=${vitestJson}`, "--reporter=./scripts/lib/vitest-budget-reporter.ts", `--outputFile.budget=${vitestBudgetJson}`],
  { cwd: root, stdio: "inherit", env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" } },
));
countVitest(vitestJson, vitest.status, readReport(vitestBudgetJson)?.unhandledErrors);

// 2. Playwright: the dashboard in a real Chromium against the built app on its own database and port.
const playwright = await runPlaywright("Playwright (browser)", "playwright.json");
// 3. A few of them again with the app on PostgreSQL (a throwaway cluster of its own): the board
// shows ingested threads live, and Stop retrying goes round to stopped. `npm run soak` runs them all
// so (RADAR_E2E_POSTGRES_SUITES=all).
const PLAYWRIGHT_ON_POSTGRES =
  process.env.RADAR_E2E_POSTGRES_SUITES === "all"
    ? []
    : ["e2e/ui/admin.setup.ts", "e2e/ui/board.spec.ts", "--grep", "appears live|Stop retrying turns the row stopping|the admin signs in"];
const playwrightPostgres = await runPlaywright("Playwright on PostgreSQL", "playwright-postgres.json", { RADAR_E2E_STORE: "postgres" }, PLAYWRIGHT_ON_POSTGRES);

finish(failed > 0 || typecheck.status !== 0 || vitest.status !== 0 || playwright.status !== 0 || playwrightPostgres.status !== 0 ? 1 : 0);

/** One Playwright run on its own port and data folder, counted; `args` narrows it to some specs. */
async function runPlaywright(part, reportName, env = {}, args = []) {
  const report = path.join(reports, reportName);
  playwrightJsons.push(report);
  const port = await freePort();
  const result = timed(part, () => spawnSync(
    path.join(root, "node_modules", ".bin", "playwright"),
    ["test", "--config", "e2e/playwright.config.ts", "--reporter=list,json", ...args],
    {
      cwd: root,
      stdio: "inherit",
      env: {
        ...process.env,
        PLAYWRIGHT_JSON_OUTPUT_NAME: report,
        PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1",
        RADAR_E2E_PORT: String(port),
        RADAR_E2E_DATA: fs.mkdtempSync(path.join(os.tmpdir(), "radar-e2e-")),
        ...(chromium ? { RADAR_CHROMIUM: chromium } : {}),
        ...env,
      },
    },
  ));
  countPlaywright(report, result.status);
  return result;
}

function countVitest(file, status, unhandledErrors) {
  count(tallyVitest(readReport(file), status, unhandledErrors));
}

function countPlaywright(file, status) {
  count(tallyPlaywright(readReport(file), status));
}

function count(tally) {
  passed += tally.passed;
  failed += tally.failed;
  unowned.push(...tally.failures);
}

function readReport(file) {
  try {
    return JSON.parse(fs.readFileSync(file, "utf8"));
  } catch {
    return null;
  }
}

/** The time budget: each part's wall time, then the slowest files and tests of both runners. */
function printBudget() {
  const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
  const pad = (text, width) => text + " ".repeat(Math.max(1, width - text.length));
  const rel = (file) => path.relative(root, path.resolve(root, file));
  const files = [];
  const tests = [];
  let vitestSum = null;
  try {
    const report = JSON.parse(fs.readFileSync(vitestJson, "utf8"));
    // A file's whole time when the budget reporter wrote it (the JSON report's runs from its first
    // test to its last, without imports and hooks: a server started in beforeAll is not in it).
    const whole = readReport(vitestBudgetJson)?.files ?? [];
    for (const f of whole) files.push([`vitest     ${f.file}${f.project === "sqlite" ? "" : ` (${f.project})`}`, f.ms]);
    for (const result of report.testResults ?? []) {
      if (!whole.length) {
        const ms = result.endTime && result.startTime ? result.endTime - result.startTime : (result.assertionResults ?? []).reduce((sum, a) => sum + (a.duration ?? 0), 0);
        files.push([`vitest     ${rel(result.name)}`, ms]);
      }
      for (const a of result.assertionResults ?? []) tests.push([`vitest     ${rel(result.name)} › ${a.fullName ?? a.title}`, a.duration ?? 0]);
    }
    if (whole.length) {
      const sum = whole.reduce((total, f) => total + f.ms, 0);
      const imports = whole.reduce((total, f) => total + f.importMs, 0);
      vitestSum = `vitest: ${whole.length} files, their whole times summed ${seconds(sum)} (of which imports ${seconds(imports)})`;
    }
  } catch {
    // no vitest report (it did not run or crashed): nothing to rank
  }
  for (const playwrightJson of playwrightJsons) {
    try {
      const report = JSON.parse(fs.readFileSync(playwrightJson, "utf8"));
      const runner = playwrightJson.endsWith("-postgres.json") ? "playwright (postgres)" : "playwright";
      const walk = (suite, file) => {
        const here = suite.file ?? file;
        for (const spec of suite.specs ?? []) {
          const ms = (spec.tests ?? []).flatMap((t) => t.results ?? []).reduce((sum, r) => sum + (r.duration ?? 0), 0);
          const name = `${runner} e2e/ui/${spec.file ?? here}`;
          tests.push([`${name} › ${spec.title}`, ms]);
          const entry = files.find(([f]) => f === name);
          if (entry) entry[1] += ms;
          else files.push([name, ms]);
        }
        for (const child of suite.suites ?? []) walk(child, here);
      };
      for (const suite of report.suites ?? []) walk(suite, suite.file);
    } catch {
      // no Playwright report
    }
  }
  const lines = ["", "time budget:"];
  for (const [part, ms] of parts) lines.push(`  ${pad(part, 40)}${seconds(ms).padStart(9)}`);
  lines.push(`  ${pad("total", 40)}${seconds(Date.now() - startedAt).padStart(9)}`);
  // Against the vitest part's wall time: how much its workers overlapped (or sat idle).
  if (vitestSum) lines.push(vitestSum);
  const top = (list, n) => [...list].sort((a, b) => b[1] - a[1]).slice(0, n);
  if (files.length) {
    lines.push("slowest files:");
    for (const [file, ms] of top(files, 10)) lines.push(`  ${seconds(ms).padStart(9)}  ${file}`);
  }
  if (tests.length) {
    lines.push("slowest tests:");
    for (const [test, ms] of top(tests, 10)) lines.push(`  ${seconds(ms).padStart(9)}  ${test.length > 150 ? `${test.slice(0, 147)}...` : test}`);
  }
  console.log(lines.join("\n"));
}


