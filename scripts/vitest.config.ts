import path from "node:path";
import { defineConfig } from "vitest/config";

const root = path.resolve(import.meta.dirname, "..");

export default defineConfig({
  root,
  resolve: { alias: { "@": root } },
  test: {
    environment: "node",
    // Unit suites live beside their code; e2e/api holds integration suites against a real server.
    include: ["lib/**/*.test.ts", "scripts/**/*.test.ts", "e2e/api/**/*.test.ts"],
    // Bounds that only stop a hung test: integration suites start built servers and real agents,
    // and a busy machine must never hit them (tests wait on milestones, not on the clock).
    testTimeout: 300_000,
    hookTimeout: 300_000,
  },
});
