// The Chromium that the browser tests and the board bench drive. Shared by `npm test` and
// `npm run bench`: Playwright cannot download its browsers on these machines, so Debian's
// chromium is installed with apt when missing. Plain JavaScript so `npm test` can use it before
// anything is compiled; chromium.d.mts types it for TypeScript.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { aptInstall } from "./apt.mjs";
import { log, root } from "./prepare.mjs";

/**
 * The path of a Chromium to launch (RADAR_CHROMIUM, else Debian's, installed when missing), or
 * null when only Playwright's own browser is there (launch without an executable path then).
 */
export function ensureChromium() {
  const candidates = [process.env.RADAR_CHROMIUM, "/usr/bin/chromium", "/usr/bin/chromium-browser"].filter(Boolean);
  const found = candidates.find((file) => fs.existsSync(file));
  if (found) return found;
  if (hasPlaywrightChromium()) return null;
  if (aptInstall("chromium", "the browser tests and the board bench (about a minute)") && fs.existsSync("/usr/bin/chromium")) return "/usr/bin/chromium";
  log("installing Playwright's chromium");
  spawnSync(path.join(root, "node_modules", ".bin", "playwright"), ["install", "chromium"], { cwd: root, stdio: "inherit" });
  return null;
}

function hasPlaywrightChromium() {
  const cache = process.env.PLAYWRIGHT_BROWSERS_PATH || path.join(os.homedir(), ".cache", "ms-playwright");
  return fs.existsSync(cache) && fs.readdirSync(cache).some((name) => name.startsWith("chromium"));
}
