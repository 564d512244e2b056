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

/**
 * lib/db's exports that are not made by onEitherStore (lib/db/store.ts), each with why it may
 * answer on one store or touch no connection. Everything else a lib/db module exports must answer
 * on the store DATABASE_URL names; plain data (constants, SQL text, column lists) passes unlisted.
 */
const NOT_ON_EITHER_STORE: Record<string, string> = {
  // The SQLite connection and what works on it: PostgreSQL's are under lib/db/postgres.
  "client.ts": "the SQLite connection, its writer queue and committed reads",
  "config.ts": "the SQLite file's path and its configuration error",
  "statement.ts": "SQLite's prepared statements (isoOrNull: a pure mapping beside them)",
  "migrate.ts": "SQLite's migrations (PostgreSQL's: postgres/migrate.ts)",
  "unit-of-work.ts#transaction": "chooses the store itself (postgres/unit-of-work.ts)",
  "unit-of-work.ts#andThen": "chains either store's answer to a unit of work's call, a value or a promise; touches no connection",
  "unit-of-work.ts#failedInCommitStep": "tells an error a commit step threw, on either store; touches no connection",
  "store.ts": "the choice of store itself",
  "store-prisma.ts#storePrisma": "the store's Prisma client, chosen per call",
  "store-structure.ts": "both stores' structure, each through its own connection given",
  "store-failure.ts#isStoreFailure": "classifies either store's error; touches no connection",
  "storage-full.ts#isStorageFull": "classifies either store's error; touches no connection",
  "sqlite-busy.ts#isSqliteBusy": "classifies a SQLite error (PostgreSQL has no SQLITE_BUSY); touches no connection",
  "queue.ts#processQueue": "an in-process queue of functions; touches no connection",
  "people.ts#peopleOverview": "composes listPeople and failuresSince, which answer on either store",
  "people.ts#lockedAddresses": "composes failuresSince, which answers on either store",
  // The SQLite side of a unit of work: unit-of-work.ts pairs each with PostgreSQL's …RowsOn(client).
  "alerts.ts#alertRows": "unit-of-work statements",
  "audit.ts#auditRows": "unit-of-work statements",
  "directives.ts#directiveRows": "unit-of-work statements",
  "episodes.ts#episodeRows": "unit-of-work statements",
  "events.ts#eventRows": "unit-of-work statements",
  "events.ts#eventPageOn": "inside the SQLite thread page's read transaction, on its connection",
  "incidents.ts#incidentRows": "unit-of-work statements",
  "limits.ts#limitRows": "unit-of-work statements",
  "quarantine.ts#quarantineRows": "unit-of-work statements",
  "rollups.ts#rollupRows": "unit-of-work statements",
  "sources.ts#sourceRows": "unit-of-work statements",
  "thread-join.ts#threadJoinRows": "unit-of-work statements",
  "thread-state.ts#threadRows": "unit-of-work statements",
  "sources.ts#countedThrough": "retention's SQLite unit of work (PostgreSQL's: postgres/retention.ts)",
  "sources.ts#subtractUsage": "retention's SQLite unit of work (PostgreSQL's: postgres/retention.ts)",
  "limits.ts#blockingWindowKeys": "inside the SQLite board's read transaction, on its connection",
  "limits.ts#windowsBlockingOn": "inside the SQLite thread page's read transaction, on its connection",
  // The read worker's SQLite bodies: lib/server/off-thread.ts sends PostgreSQL's (postgres/reads.ts) instead.
  "reads.ts#READS": "the read worker's SQLite reads",
  "reads.ts#EXPORTS": "the read worker's SQLite exports",
  "reads.ts#finishRead": "runs the work a read left after its transaction: no connection",
  "insights.ts#readInsights": "the read worker's SQLite read",
  "insights.ts#insights": "the same, queued (the SQLite insights tests' entry)",
  "metrics.ts#readMetrics": "the read worker's SQLite read",
  "exports.ts#exportPages": "the read worker's SQLite export",
  "exports.ts#auditExportPages": "the read worker's SQLite export",
  "exports.ts#timelinePages": "the read worker's SQLite export",
  "threads.ts#readBoard": "the read worker's SQLite read (the board page)",
  "threads.ts#readFilterOptions": "the read worker's SQLite read (the filter menus)",
  "incidents.ts#readIncidents": "the read worker's SQLite read (the board's banners)",
  "limits.ts#readLimitWindows": "the read worker's SQLite read (the Limits page and GET /api/v1/limits)",
  // Through a connection given: seeding a test's or bench's database file, rebuilding SQLite's rollups.
  "sources.ts#insertSourceInto": "seeds a given SQLite connection",
  "api-keys.ts#insertApiKeyInto": "seeds a given SQLite connection",
  "fixture.ts": "the bench's and tests' seeded SQLite database",
  "rollups.ts#rebuildRollups": "on a given SQLite connection (rebuildAllRollups: either store)",
  // Made of either-store functions or the store's Prisma client, so on either store themselves.
  "api-keys.ts#apiKeyOverviews": "maps listApiKeys",
  // Pure: SQL text and rules, mappings; no connection.
  "audit.ts#auditWhere": "SQL text",
  "directives.ts#toView": "a mapping",
  "thread-state.ts#parseState": "a mapping",
  "limits.ts#limitWindowKey": "a mapping",
  "rollups.ts#factsSql": "SQL text",
  "rollups.ts#rebuildHourStatements": "SQL text",
  "rollups.ts#rebuildThreadWaitStatements": "SQL text",
  "rollups.ts#rebuildStatements": "SQL text",
  "fact-sql.ts": "SQL text",
  "thread-filter.ts": "the thread filter's rules as SQL text and Prisma conditions",
};

describe("the layering", () => {
  it("reads a non-trivial graph (the checker itself works)", () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get("lib/server/pipeline.ts")?.some((to) => to.startsWith("lib/retry/"))).toBe(true);
  });
  it("the engine (lib/retry) imports nothing outside itself", () => {
    expect(violations((from, to) => from.startsWith("lib/retry/") && !to.startsWith("lib/retry/"))).toEqual([]);
  });
  it("nothing under lib/ reaches into app/ or components/ (but the listener's route table, which serves route files)", () => {
    const routeTable = "lib/server/listener/route-table.ts";
    expect(violations((from, to) => from.startsWith("lib/") && from !== routeTable && (to.startsWith("app/") || to.startsWith("components/")))).toEqual([]);
    expect(violations((from, to) => from === routeTable && to.startsWith("app/") && !to.endsWith("/route.ts"))).toEqual([]);
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
  it("Prometheus text is rendered where the metrics snapshot is read (the read worker, on SQLite), never by a route on the thread that ingests", () => {
    // Rendering it cost the ingest thread 7.7 ms a scrape (lib/insights/metrics.ts renderMetrics):
    // outside lib/db, code takes only its types and asks lib/server/off-thread.ts for the text.
    const exempt = (file: string) => file.startsWith("lib/db/") || file === "lib/insights/metrics.ts" || file.startsWith("scripts/") || isTest(file);
    const found: string[] = [];
    for (const [from, targets] of graph) {
      if (exempt(from) || !targets.includes("lib/insights/metrics.ts")) continue;
      for (const match of fs.readFileSync(path.join(root, from), "utf8").matchAll(IMPORT)) {
        if (/insights\/metrics$|^\.\/metrics$/.test(match[1] ?? match[2]) && !/^\s*(import|export)\s+type\s/.test(match[0])) found.push(`${from}: ${match[0].trim()}`);
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

  it("every lib/db export answers on either store, unless listed with why not", async () => {
    const { isOnEitherStore } = await import("@/lib/db/store");
    const isData = (value: unknown) =>
      typeof value !== "function" && !(value && typeof value === "object" && Object.values(value).some((v) => typeof v === "function"));
    const modules = fs.readdirSync(path.join(root, "lib/db")).filter((name) => name.endsWith(".ts") && !name.endsWith(".test.ts"));
    // The read worker's entry runs on import (a worker's script, not a module to call).
    const unlisted: string[] = [];
    const seen = new Set<string>();
    for (const name of modules.filter((name) => name !== "read-worker.ts").sort()) {
      const exports = (await import(path.join(root, "lib/db", name))) as Record<string, unknown>;
      seen.add(name);
      for (const [exported, value] of Object.entries(exports)) {
        seen.add(`${name}#${exported}`);
        if (isOnEitherStore(value) || isData(value) || NOT_ON_EITHER_STORE[name] || NOT_ON_EITHER_STORE[`${name}#${exported}`]) continue;
        unlisted.push(`${name}#${exported}`);
      }
    }
    expect(modules.length).toBeGreaterThan(20);
    expect(unlisted).toEqual([]);
    // An entry whose export is gone goes too, so the list only names what is there.
    expect(Object.keys(NOT_ON_EITHER_STORE).filter((entry) => !seen.has(entry))).toEqual([]);
  });
});

describe("one Next per process", () => {
  it("only the listener (lib/server/listener/serve.ts) loads Next's server to serve requests", () => {
    // A value import of the package "next" is its server factory; pages take only its types.
    const startsNext = /import\(\s*["']next["']\s*\)|^\s*import\s+(?!type\b)[^;]*from\s+["']next["']/m;
    const starters = files.filter((file) => !isTest(rel(file)) && startsNext.test(fs.readFileSync(file, "utf8"))).map(rel);
    expect(starters).toEqual(["lib/server/listener/serve.ts"]);
  });
});

describe("only documented framework APIs", () => {
  const production = files.map(rel).filter((file) => /^(lib|app|components)\//.test(file) && !isTest(file));
  const offending = (pattern: RegExp) =>
    production.flatMap((file) =>
      fs
        .readFileSync(path.join(root, file), "utf8")
        .split("\n")
        .flatMap((line, i) => (pattern.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );

  it("reads the production files of lib/, app/ and components/ (the check itself works)", () => {
    expect(production.length).toBeGreaterThan(100);
    expect(production).toContain("lib/server/listener/serve.ts");
  });
  it("never touches a route's private module (routeModule, ensureUserland, userland)", () => {
    expect(offending(/\b(routeModule|ensureUserland|userland)\b/)).toEqual([]);
  });
  it("never imports next/dist", () => {
    expect(offending(/["'`]next\/dist(\/|["'`])/)).toEqual([]);
  });
  it("never names a path in Next's build output (.next)", () => {
    expect(offending(/(^|["'`/\\\s(])\.next(["'`/\\]|$)/)).toEqual([]);
  });
});
