import os from "node:os";
import path from "node:path";
import { defineConfig, devices } from "@playwright/test";
import { LISTENER_BUNDLE } from "../lib/server/listener/bundle.mjs";
import { ADMIN_STATE, E2E_ADMIN, E2E_TOKEN } from "./support/e2e-env";
import { e2eStore } from "./support/e2e-store";

// `npm test` passes a free port, a temporary data folder and the Chromium it found.
const root = path.resolve(import.meta.dirname, "..");
const port = Number(process.env.RADAR_E2E_PORT ?? 3917);
const dataDir = process.env.RADAR_E2E_DATA ?? path.join(os.tmpdir(), `radar-e2e-${port}`);
const chromium = process.env.RADAR_CHROMIUM;
// RADAR_E2E_STORE=postgres: the same app on a database in a throwaway PostgreSQL cluster of its own.
const onPostgres = e2eStore() === "postgres";
const server = [process.execPath, path.join(root, LISTENER_BUNDLE)];

export default defineConfig({
  testDir: "./ui",
  outputDir: path.join(root, "test-results"),
  fullyParallel: false,
  workers: 1,
  retries: 0,
  // Bounds that only stop a hung test: every wait is on something the page will show, and a busy
  // machine (both cores taken) must never hit them. A test takes seconds idle, a minute loaded.
  timeout: 300_000,
  expect: { timeout: 60_000 },
  use: {
    ...devices["Desktop Chrome"],
    baseURL: `http://127.0.0.1:${port}`,
    viewport: { width: 1440, height: 900 },
    trace: "retain-on-failure",
    launchOptions: {
      ...(chromium ? { executablePath: chromium } : {}),
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    },
  },
  projects: [
    // Signs in once as the admin; every spec starts from that browser state (its own sign-ins aside).
    { name: "sign-in", testMatch: /.*\.setup\.ts/ },
    // What a new user sees on an empty database: before any spec has sent an event, whatever the files' order.
    { name: "first-run", dependencies: ["sign-in"], testMatch: /first-run\.spec\.ts/, use: { storageState: path.join(root, ADMIN_STATE) } },
    { name: "dashboard", dependencies: ["first-run"], testIgnore: /first-run\.spec\.ts/, use: { storageState: path.join(root, ADMIN_STATE) } },
  ],
  webServer: {
    // The built app, as `npm start` serves it, on its own database and port (HOST and PORT below); `npm test` builds it first.
    command: (onPostgres ? [path.join(root, "node_modules", ".bin", "tsx"), path.join(root, "e2e", "support", "serve-on-postgres.ts"), server[1]] : server)
      .map((part) => JSON.stringify(part))
      .join(" "),
    cwd: root,
    url: `http://127.0.0.1:${port}/api/health`,
    reuseExistingServer: false,
    timeout: 180_000,
    // On PostgreSQL, a moment to end cleanly: the command stops its cluster once the app has ended.
    ...(onPostgres ? { gracefulShutdown: { signal: "SIGTERM" as const, timeout: 10_000 } } : {}),
    stdout: "pipe",
    env: {
      ...(onPostgres ? {} : { DATABASE_URL: `file:${path.join(dataDir, "radar.db")}` }),
      RADAR_INGEST_TOKEN: E2E_TOKEN,
      RADAR_ADMIN_EMAIL: E2E_ADMIN.email,
      RADAR_ADMIN_PASSWORD: E2E_ADMIN.password,
      // Long, so that a stopped row stays `stopping` until the spec acknowledges it, however busy
      // the machine (no spec waits for a stop to turn broken).
      RADAR_STOP_GRACE_MS: "120000",
      // The alerts spec's webhook receiver listens on loopback.
      RADAR_WEBHOOK_ALLOW: "127.0.0.1",
      NEXT_TELEMETRY_DISABLED: "1",
      HOST: "127.0.0.1",
      PORT: String(port),
    },
  },
});
