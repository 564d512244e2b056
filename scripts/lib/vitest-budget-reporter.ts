import fs from "node:fs";
import type { SerializedError } from "vitest";
import type { Reporter, TestModule } from "vitest/node";

/**
 * What `npm test`'s time budget needs and vitest's JSON report lacks: each file's whole time in
 * its worker — importing it and its hooks (a server started in beforeAll) as well as its tests;
 * the JSON report times a file from its first test to its last — and the errors no test owns.
 * Written to `--outputFile.budget=<file>` at the end of the run.
 */
export interface BudgetReport {
  files: { file: string; project: string; ms: number; importMs: number; state: string }[];
  unhandledErrors: string[];
}

export default class BudgetReporter implements Reporter {
  private output: string | undefined;
  private root = process.cwd();

  onInit(vitest: { config: { root: string; outputFile?: string | Record<string, string> } }) {
    this.root = vitest.config.root;
    const outputFile = vitest.config.outputFile;
    this.output = typeof outputFile === "object" ? outputFile.budget : undefined;
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<SerializedError>) {
    if (!this.output) return;
    const report: BudgetReport = {
      files: modules.map((module) => {
        const d = module.diagnostic();
        return {
          file: module.moduleId.startsWith(this.root) ? module.moduleId.slice(this.root.length + 1) : module.moduleId,
          project: module.project.name,
          ms: Math.round(d.prepareDuration + d.environmentSetupDuration + d.setupDuration + d.collectDuration + d.duration),
          importMs: Math.round(d.collectDuration),
          state: module.state(),
        };
      }),
      unhandledErrors: unhandledErrors.map((error) => `${error.name ?? "Error"}: ${error.message ?? ""}`.split("\n")[0]),
    };
    fs.writeFileSync(this.output, JSON.stringify(report, null, 1));
  }
}
