import path from "node:path";
import { defineConfig } from "vitest/config";

const root = path.resolve(import.meta.dirname, "..");
// Unit suites live beside their code; e2e/api holds integration suites against a real server.
const suites = ["lib/**/*.test.ts", "scripts/**/*.test.ts", "e2e/api/**/*.test.ts"];
// Suites named *.pg.test.ts run against a real PostgreSQL: their own project, whose global setup
// starts one throwaway cluster per run, and only when at least one of them is selected.
const postgresSuites = suites.map((glob) => glob.replace(/\.test\.ts$/, ".pg.test.ts"));
// The end-to-end suites that run a second time with their servers on PostgreSQL (RADAR_E2E_STORE,
// e2e/support/e2e-store.ts): ingestion, directives, the watchdog, the live stream, and kill -9
// with a restart that keeps every acknowledged event and schedule, and graces that run from a
// restart (the first answers after it already show the watchdog caught up).
// `npm run soak` sets RADAR_E2E_POSTGRES_SUITES=all to run every e2e/api suite so.
const e2eOnPostgres =
  process.env.RADAR_E2E_POSTGRES_SUITES === "all"
    ? ["e2e/api/**/*.test.ts"]
    : ["e2e/api/ingest.test.ts", "e2e/api/listener.test.ts", "e2e/api/faults.test.ts", "e2e/api/restart.test.ts"];

export default defineConfig({
  root,
  resolve: { alias: { "@": root } },
  test: {
    environment: "node",
    // vitest's default worker count (one fewer than the cores: one file at a time here). Two at once
    // were not faster at load 20+, and integration suites that start servers and real agents are
    // the ones a saturated machine makes slow; measure on a quiet machine before raising it.
    // Bounds that only stop a hung test: integration suites start built servers and real agents,
    // and a busy machine must never hit them (tests wait on milestones, not on the clock).
    testTimeout: 300_000,
    hookTimeout: 300_000,
    projects: [
      { extends: true, test: { name: "sqlite", include: suites, exclude: [...postgresSuites, "**/node_modules/**"] } },
      { extends: true, test: { name: "postgres", include: postgresSuites, globalSetup: ["e2e/support/postgres-setup.ts"] } },
      {
        extends: true,
        test: {
          name: "postgres-e2e",
          include: e2eOnPostgres,
          exclude: [...postgresSuites, "**/node_modules/**"],
          globalSetup: ["e2e/support/postgres-setup.ts"],
          setupFiles: ["e2e/support/postgres-e2e-setup.ts"],
        },
      },
    ],
  },
});
