import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { event } from "./bench-ingest";
import { median } from "./lib/stats";

/**
 * Where a batch's time goes, in process (no HTTP, no Next): the events of `bench-ingest.ts`,
 * batches of 500, each timed by stage — body parse, normalisation, the unit of work (reduce and
 * persist, commit included), the directives of the answer. Prints the mean per batch and the CPU
 * this process spent per batch (less sensitive than wall time to a busy machine). Run with
 * `node --cpu-prof --import tsx scripts/profile-ingest.ts` for a profile of the same work.
 */
if (!process.env.DATABASE_URL) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-profile-"));
  process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
  process.env.DATABASE_URL = `file:${path.join(dir, "radar.db")}`;
}

const BATCH = 500;
const BATCHES = Number(process.env.BATCHES ?? 100);

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
}

main();
