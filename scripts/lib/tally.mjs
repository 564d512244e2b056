// How `npm test` counts a runner's JSON report into its closing line (plain JavaScript, so it runs
// before anything is compiled; tally.d.mts types it for the tests). A failure that no test owns —
// a file whose beforeAll threw, a Playwright web server that never started, a runner that exited
// non-zero with nothing failed in its report — still counts as one failure and is named, so the
// line never reads "0 failed" under a non-zero exit.

/**
 * A vitest JSON report (or null when there is none), the runner's exit status and the errors no
 * test owns (scripts/lib/vitest-budget-reporter.ts; the JSON report leaves them out).
 */
export function tallyVitest(report, status, unhandledErrors = []) {
  if (!report) return { passed: 0, failed: 1, failures: [`vitest wrote no report (exit ${status})`] };
  let failed = report.numFailedTests ?? 0;
  const failures = [];
  for (const file of report.testResults ?? []) {
    if (file.status !== "failed") continue;
    if ((file.assertionResults ?? []).some((test) => test.status === "failed")) continue;
    failed += 1;
    failures.push(`vitest file ${file.name} failed outside its tests: ${firstLine(file.message) || "no message"}`);
  }
  for (const error of unhandledErrors ?? []) {
    failed += 1;
    failures.push(`vitest error outside a test: ${firstLine(error) || "no message"}`);
  }
  if (status !== 0 && failed === 0) {
    failed = 1;
    failures.push(`vitest exited ${status} without a failed test in its report (an unhandled error: see its output above)`);
  }
  return { passed: report.numPassedTests ?? 0, failed, failures };
}

/** A Playwright JSON report (or null when there is none) and the runner's exit status. */
export function tallyPlaywright(report, status) {
  if (!report?.stats) return { passed: 0, failed: 1, failures: [`Playwright wrote no report (exit ${status})`] };
  const { stats } = report;
  let failed = stats.unexpected ?? 0;
  const failures = [];
  // Errors outside any test: global setup, the web server, a spec that does not load.
  for (const error of report.errors ?? []) {
    failed += 1;
    const where = error.location ? ` (${error.location.file}:${error.location.line})` : "";
    failures.push(`Playwright error outside a test${where}: ${firstLine(error.message ?? error.value) || "no message"}`);
  }
  if (status !== 0 && failed === 0) {
    failed = 1;
    failures.push(`Playwright exited ${status} without a failed test in its report (see its output above)`);
  }
  return { passed: (stats.expected ?? 0) + (stats.flaky ?? 0), failed, failures };
}

function firstLine(text) {
  // Reports colour their messages; the closing lines are plain.
  return String(text ?? "").replace(/\u001b\[[0-9;]*m/g, "").split("\n").find((line) => line.trim())?.trim().slice(0, 300) ?? "";
}
