#!/usr/bin/env node
// `npm test`: every suite — unit and integration (vitest, against real SQLite files and a real
// running server) and browser tests (Playwright in a real Chromium) — then one closing line:
// `tests: N passed, N failed`, summed over both runners. Exits non-zero on any failure.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { log, prepare, root } from "./lib/prepare.mjs";

const reports = fs.mkdtempSync(path.join(os.tmpdir(), "radar-test-"));
let passed = 0;
let failed = 0;

function finish(code) {
  console.log(`tests: ${passed} passed, ${failed} failed`);
  process.exit(code);
}

try {
  prepare();
} catch (error) {
  log(`could not prepare the project: ${error.message}`);
  failed += 1;
  finish(1);
}

const chromium = ensureChromium();

// 0. The whole tree type-checks (the build skips it; this is where it is enforced).
const typecheck = spawnSync(path.join(root, "node_modules", ".bin", "tsc"), ["--noEmit", "-p", "."], { cwd: root, stdio: "inherit" });
if (typecheck.status === 0) passed += 1;
else {
  log("type check failed (tsc --noEmit)");
  failed += 1;
}

// 1. vitest: unit suites and the API integration suites (e2e/api) that start the built server.
const vitestJson = path.join(reports, "vitest.json");
const vitest = spawnSync(
  path.join(root, "node_modules", ".bin", "vitest"),
  ["run", "--config", "scripts/vitest.config.ts", "--reporter=default", "--reporter=json", `--outputFile.json=${vitestJson}`],
  { cwd: root, stdio: "inherit", env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" } },
);
countVitest(vitestJson, vitest.status);

// 2. Playwright: the dashboard in a real Chromium against the built app on its own database and port.
const playwrightJson = path.join(reports, "playwright.json");
const port = await freePort();
const playwright = spawnSync(
  path.join(root, "node_modules", ".bin", "playwright"),
  ["test", "--config", "e2e/playwright.config.ts", "--reporter=list,json"],
  {
    cwd: root,
    stdio: "inherit",
    env: {
      ...process.env,
      PLAYWRIGHT_JSON_OUTPUT_NAME: playwrightJson,
      PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1",
      RADAR_E2E_PORT: String(port),
      RADAR_E2E_DATA: fs.mkdtempSync(path.join(os.tmpdir(), "radar-e2e-")),
      ...(chromium ? { RADAR_CHROMIUM: chromium } : {}),
    },
  },
);
countPlaywright(playwrightJson, playwright.status);

finish(failed > 0 || typecheck.status !== 0 || vitest.status !== 0 || playwright.status !== 0 ? 1 : 0);

function countVitest(file, status) {
  try {
    const report = JSON.parse(fs.readFileSync(file, "utf8"));
    passed += report.numPassedTests;
    failed += report.numFailedTests;
    // A suite that fails to load has no failed tests but must still count as a failure.
    const broken = (report.testResults ?? []).filter((r) => r.status === "failed" && r.assertionResults.length === 0).length;
    failed += broken;
  } catch {
    log(`vitest wrote no report (exit ${status})`);
    failed += 1;
  }
}

function countPlaywright(file, status) {
  try {
    const { stats } = JSON.parse(fs.readFileSync(file, "utf8"));
    passed += stats.expected + stats.flaky;
    failed += stats.unexpected;
    if (status !== 0 && stats.unexpected === 0) failed += 1;
  } catch {
    log(`Playwright wrote no report (exit ${status})`);
    failed += 1;
  }
}

/** Debian's chromium where apt exists (Playwright cannot download browsers offline), else Playwright's own. */
function ensureChromium() {
  const candidates = [process.env.RADAR_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"].filter(Boolean);
  const found = candidates.find((file) => fs.existsSync(file));
  if (found) return found;
  if (hasPlaywrightChromium()) return null;
  if (fs.existsSync("/usr/bin/apt-get")) {
    log("installing Debian's chromium for the browser tests (about a minute)");
    const sudo = process.getuid?.() === 0 ? [] : ["sudo"];
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    spawnSync(sudo[0] ?? "apt-get", [...sudo.slice(1), ...(sudo.length ? ["apt-get"] : []), "update"], { stdio: "inherit", env });
    spawnSync(sudo[0] ?? "apt-get", [...(sudo.length ? ["apt-get"] : []), "install", "-y", "--no-install-recommends", "chromium"], { stdio: "inherit", env });
    if (fs.existsSync("/usr/bin/chromium")) return "/usr/bin/chromium";
  }
  log("installing Playwright's chromium");
  spawnSync(path.join(root, "node_modules", ".bin", "playwright"), ["install", "chromium"], { cwd: root, stdio: "inherit" });
  return null;
}

function hasPlaywrightChromium() {
  const cache = process.env.PLAYWRIGHT_BROWSERS_PATH || path.join(os.homedir(), ".cache", "ms-playwright");
  return fs.existsSync(cache) && fs.readdirSync(cache).some((name) => name.startsWith("chromium"));
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
