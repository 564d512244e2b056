import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The layering, checked on the source text: which folder may import which, and no import cycles.
 * Imports are read with a regular expression (static `import … from`, `export … from` and
 * `import("…")`), resolved for relative paths and the `@/` alias.
 */
const root = path.resolve(import.meta.dirname, "..");
const SOURCE = /\.(ts|tsx|mjs)$/;
const SKIP = new Set(["node_modules", ".next", "generated", "generated-pg", "test-results", "playwright-report", "data", ".git"]);

function walk(dir: string, out: string[] = []): string[] {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, out);
    else if (SOURCE.test(entry.name)) out.push(full);
  }
  return out;
}

const files = ["app", "components", "lib", "scripts", "e2e"].flatMap((dir) => walk(path.join(root, dir)));
const rel = (file: string) => path.relative(root, file).split(path.sep).join("/");
const isTest = (file: string) => /\.(test|spec)\.tsx?$/.test(file) || file.startsWith("e2e/") || /(^|\/)testing\.ts$/.test(file) || file.includes("test-fixtures");

function resolveImport(from: string, spec: string): string | null {
  let base: string;
  if (spec.startsWith("@/")) base = path.join(root, spec.slice(2));
  else if (spec.startsWith(".")) base = path.resolve(path.dirname(from), spec);
  else return null;
  for (const candidate of [base, `${base}.ts`, `${base}.tsx`, `${base}.mjs`, path.join(base, "index.ts"), path.join(base, "index.tsx")]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  return null;
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g;
const graph = new Map<string, string[]>();
for (const file of files) {
  const text = fs.readFileSync(file, "utf8");
  const targets: string[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const target = resolveImport(file, match[1] ?? match[2]);
    if (target) targets.push(rel(target));
  }
  graph.set(rel(file), targets);
}

function violations(rule: (from: string, to: string) => boolean): string[] {
  const found: string[] = [];
  for (const [from, targets] of graph) for (const to of targets) if (rule(from, to)) found.push(`${from} → ${to}`);
  return found;
}

describe("the layering", () => {
  it("reads a non-trivial graph (the checker itself works)", () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get("lib/server/pipeline.ts")?.some((to) => to.startsWith("lib/retry/"))).toBe(true);
  });
  it("the engine (lib/retry) imports nothing outside itself", () => {
    expect(violations((from, to) => from.startsWith("lib/retry/") && !to.startsWith("lib/retry/"))).toEqual([]);
  });
  it("nothing under lib/ reaches into app/ or components/", () => {
    expect(violations((from, to) => from.startsWith("lib/") && (to.startsWith("app/") || to.startsWith("components/")))).toEqual([]);
  });
  it("no production code imports from e2e/ or from a test", () => {
    expect(violations((from, to) => !isTest(from) && (to.startsWith("e2e/") || isTest(to)))).toEqual([]);
  });
  it("components and the browser's data module never import the database or server layers (types come from lib/wire)", () => {
    const client = (file: string) => file.startsWith("components/") || file.startsWith("lib/client/");
    expect(violations((from, to) => client(from) && (to.startsWith("lib/db/") || to.startsWith("lib/server/")))).toEqual([]);
  });
  it("the server reaches the heavy reads (insights, exports, the metrics snapshot) only through the read worker's channel", () => {
    // lib/server/off-thread.ts runs them on the read worker; called anywhere else, they would run
    // on the thread that ingests. Benchmarks (scripts/) time them directly.
    const heavy = /\b(readInsights|insights|exportPages|auditExportPages|timelinePages|readMetrics|metricsSnapshot|READS|EXPORTS)\b/;
    const allowed = (file: string) => file.startsWith("lib/db/") || file === "lib/server/off-thread.ts" || file.startsWith("scripts/") || isTest(file);
    const found: string[] = [];
    for (const [from, targets] of graph) {
      if (allowed(from) || !targets.some((to) => /^lib\/db\/(insights|exports|metrics|reads)\.ts$/.test(to))) continue;
      for (const match of fs.readFileSync(path.join(root, from), "utf8").matchAll(IMPORT)) {
        if (/lib\/db\/(insights|exports|metrics|reads)$|^\.\/(insights|exports|metrics|reads)$/.test(match[1] ?? match[2]) && heavy.test(match[0])) found.push(`${from}: ${match[0].trim()}`);
      }
    }
    expect(found).toEqual([]);
  });
  it("the relay imports nothing from the database layer", () => {
    expect(violations((from, to) => from.startsWith("scripts/relay/") && to.startsWith("lib/db/"))).toEqual([]);
  });
  it("has no import cycles", () => {
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (node: string) => {
      state.set(node, "open");
      stack.push(node);
      for (const next of graph.get(node) ?? []) {
        if (state.get(next) === "open") cycles.push([...stack.slice(stack.indexOf(next)), next].join(" → "));
        else if (!state.has(next)) visit(next);
      }
      stack.pop();
      state.set(node, "done");
    };
    for (const node of graph.keys()) if (!state.has(node)) visit(node);
    expect(cycles).toEqual([]);
  });
});
