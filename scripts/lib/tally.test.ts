import { describe, expect, it } from "vitest";
import { tallyPlaywright, tallyVitest } from "./tally.mjs";

const file = (name: string, status: string, tests: string[], message = "") => ({
  name,
  status,
  message,
  assertionResults: tests.map((testStatus, i) => ({ title: `test ${i}`, status: testStatus, failureMessages: [] })),
});

describe("tallyVitest", () => {
  it("counts passed and failed tests", () => {
    const report = { numPassedTests: 3, numFailedTests: 1, testResults: [file("/a.test.ts", "passed", ["passed", "passed"]), file("/b.test.ts", "failed", ["passed", "failed"])] };
    expect(tallyVitest(report, 1)).toEqual({ passed: 3, failed: 1, failures: [] });
  });

  it("counts a file whose beforeAll threw (its tests skipped) as one failure, named", () => {
    const report = {
      numPassedTests: 1997,
      numFailedTests: 0,
      testResults: [file("/a.test.ts", "passed", ["passed"]), file("/e2e/api/instances.pg.test.ts", "failed", ["skipped", "skipped"], "\u001b[31mserver did not become healthy in 120 s:\u001b[39m\nlog…")],
    };
    const tally = tallyVitest(report, 1);
    expect(tally.passed).toBe(1997);
    expect(tally.failed).toBe(1);
    expect(tally.failures).toEqual(["vitest file /e2e/api/instances.pg.test.ts failed outside its tests: server did not become healthy in 120 s:"]);
  });

  it("counts a file that failed to load (no tests at all)", () => {
    const tally = tallyVitest({ numPassedTests: 0, numFailedTests: 0, testResults: [file("/c.test.ts", "failed", [], "Cannot find module")] }, 1);
    expect(tally.failed).toBe(1);
    expect(tally.failures[0]).toContain("/c.test.ts");
  });

  it("counts each error outside a test (an unhandled rejection), named", () => {
    const tally = tallyVitest({ numPassedTests: 5, numFailedTests: 0, testResults: [] }, 1, ["Error: listen EADDRINUSE"]);
    expect(tally).toEqual({ passed: 5, failed: 1, failures: ["vitest error outside a test: Error: listen EADDRINUSE"] });
  });

  it("counts a non-zero exit with nothing failed in the report, and a missing report", () => {
    expect(tallyVitest({ numPassedTests: 5, numFailedTests: 0, testResults: [] }, 1)).toMatchObject({ passed: 5, failed: 1 });
    expect(tallyVitest({ numPassedTests: 5, numFailedTests: 0, testResults: [] }, 0)).toEqual({ passed: 5, failed: 0, failures: [] });
    expect(tallyVitest(null, 1)).toMatchObject({ passed: 0, failed: 1 });
  });
});

describe("tallyPlaywright", () => {
  it("counts expected and flaky as passed, unexpected as failed", () => {
    expect(tallyPlaywright({ stats: { expected: 30, flaky: 2, unexpected: 1 }, errors: [] }, 1)).toEqual({ passed: 32, failed: 1, failures: [] });
  });

  it("counts each error outside a test (the web server, a global setup) as one failure, named", () => {
    const report = { stats: { expected: 0, flaky: 0, unexpected: 0 }, errors: [{ message: "Error: Timed out waiting 180000ms from config.webServer.\n  at …" }] };
    expect(tallyPlaywright(report, 1)).toEqual({ passed: 0, failed: 1, failures: ["Playwright error outside a test: Error: Timed out waiting 180000ms from config.webServer."] });
  });

  it("counts a non-zero exit with nothing failed, and a missing report", () => {
    expect(tallyPlaywright({ stats: { expected: 4, flaky: 0, unexpected: 0 }, errors: [] }, 1)).toMatchObject({ passed: 4, failed: 1 });
    expect(tallyPlaywright(null, 1)).toMatchObject({ passed: 0, failed: 1 });
  });
});
