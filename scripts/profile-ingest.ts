import Database from "better-sqlite3";
import { event } from "./bench-ingest";
import { median } from "./lib/stats";
import { useTemporaryDatabase } from "./lib/temporary-database";

/**
 * Where a batch's time goes, in process (no HTTP, no Next): the events of `bench-ingest.ts`,
 * batches of 500, each timed by stage — body parse, normalisation, the unit of work (reduce and
 * persist, commit included), the directives of the answer. Prints the mean per batch and the CPU
 * this process spent per batch (less sensitive than wall time to a busy machine). Run with
 * `node --cpu-prof --import tsx scripts/profile-ingest.ts` for a profile of the same work;
 * `--statements` also lists each SQL statement's runs and time per batch (COMMIT included, and with
 * it SQLite's own checkpoints, which land in some COMMITs). `--async-context`
 * runs the batches inside an AsyncLocalStorage, as Next's request handling does: Node 20 then runs
 * a hook for every promise, the cost lib/server/pipeline.ts's "Promises per event" is about.
 */
useTemporaryDatabase();

const BATCH = 500;
const BATCHES = Number(process.env.BATCHES ?? 100);

/** Every statement's runs and time, by its text, from the moment this is called. */
function timeStatements(): Map<string, { runs: number; ms: number }> {
  const byText = new Map<string, { runs: number; ms: number }>();
  const count = (text: string, started: number) => {
    const entry = byText.get(text) ?? { runs: 0, ms: 0 };
    entry.runs++;
    entry.ms += performance.now() - started;
    byText.set(text, entry);
  };
  const probe = new Database(":memory:");
  const statementClass = probe.prepare("SELECT 1").constructor.prototype as Record<string, (...args: unknown[]) => unknown>;
  probe.close();
  for (const method of ["run", "get", "all"]) {
    const original = statementClass[method];
    statementClass[method] = function (this: Database.Statement, ...args: unknown[]) {
      const started = performance.now();
      try {
        return original.apply(this, args);
      } finally {
        count(this.source, started);
      }
    };
  }
  const exec = Database.prototype.exec;
  Database.prototype.exec = function (this: Database.Database, text: string) {
    const started = performance.now();
    try {
      return exec.call(this, text);
    } finally {
      count(text, started);
    }
  };
  return byText;
}

const statements = process.argv.includes("--statements") ? timeStatements() : null;

async function main() {
  const { parseBody } = await import("@/lib/ingest/body");
  const { normalizeBatch, withoutIgnored } = await import("@/lib/ingest");
  const { ingestLines } = await import("@/lib/server/pipeline");
  const { createSource } = await import("@/lib/server/tokens");
  const { openDirectivesForThreads } = await import("@/lib/db/directives");
  const source = await createSource("profile", `rr_profile_${Date.now()}`);
  const base = Date.now() - 86_400_000;
  const stages = { parse: 0, normalize: 0, unitOfWork: 0, directives: 0 };
  const latencies: number[] = [];
  const cpuBefore = process.cpuUsage();
  for (let b = 0; b < BATCHES; b++) {
    const text = JSON.stringify(Array.from({ length: BATCH }, (_, i) => event(b * BATCH + i, base)));
    const now = Date.now();
    const t0 = performance.now();
    const parsed = parseBody(text, "application/json");
    const t1 = performance.now();
    const { lines } = withoutIgnored(normalizeBatch("canonical", parsed.items, { receivedAt: now, threadId: null, turnId: null }).lines);
    const t2 = performance.now();
    const outcome = await ingestLines(source, lines, now);
    const t3 = performance.now();
    await openDirectivesForThreads(source.id, outcome.threadIds);
    const t4 = performance.now();
    stages.parse += t1 - t0;
    stages.normalize += t2 - t1;
    stages.unitOfWork += t3 - t2;
    stages.directives += t4 - t3;
    latencies.push(t4 - t0);
  }
  const cpu = process.cpuUsage(cpuBefore);
  const perBatch = (ms: number) => `${(ms / BATCHES).toFixed(2)} ms`;
  console.log(`${BATCHES} batches of ${BATCH}: p50 ${median(latencies).toFixed(1)} ms per batch, CPU ${perBatch((cpu.user + cpu.system) / 1000)} per batch`);
  console.log(Object.entries(stages).map(([stage, ms]) => `${stage} ${perBatch(ms)}`).join(", "));
  if (statements) {
    console.log("per batch, the statements taking the most time (runs, time, text):");
    for (const [text, { runs, ms }] of [...statements].sort((a, b) => b[1].ms - a[1].ms).slice(0, 20)) {
      console.log(`${(runs / BATCHES).toFixed(1).padStart(7)} ${perBatch(ms).padStart(9)}  ${text.replace(/\s+/g, " ").slice(0, 100)}`);
    }
  }
}

if (process.argv.includes("--async-context")) void import("node:async_hooks").then(({ AsyncLocalStorage }) => new AsyncLocalStorage().run({}, main));
else void main();
