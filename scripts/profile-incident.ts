import { percentile } from "./lib/stats";
import { useTemporaryDatabase } from "./lib/temporary-database";

/**
 * What one retry notice costs while an incident of `threads` threads is open, in process (no
 * HTTP, no Next): the open incident is built first (a notice for each thread, batches of 500),
 * then NOTICES single-notice units of work, each a notice of one of its threads, as single-event
 * POSTs make them. Every commit folds the active incidents and saves the one it changed, its
 * thread list whole (lib/server/pipeline.ts › INCIDENTS_AT_COMMIT; a list is read only when
 * another writer saved it, lib/db/records/incidents.ts), once for all the units of work it holds:
 * several clients at once share commits, and that cost. Compare sizes:
 * `for n in 20 200 2000; do npx tsx scripts/profile-incident.ts $n; done`; `--clients 8` runs
 * eight at a time. Run with `node --cpu-prof --import tsx scripts/profile-incident.ts 2000` for a
 * profile of the same work.
 */
useTemporaryDatabase();

const THREADS = Number(process.argv[2] ?? 200);
const NOTICES = 400;
/** `--clients K`: K units of work at a time, as K clients posting at once make them (they share commits: unit-of-work.ts). */
const CLIENTS = process.argv.includes("--clients") ? Number(process.argv[process.argv.indexOf("--clients") + 1]) : 1;

async function main() {
  if (!(Number.isInteger(THREADS) && THREADS >= 1)) throw new Error(`the incident's size must be a whole number of threads above 0; got "${process.argv[2]}"`);
  if (!(Number.isInteger(CLIENTS) && CLIENTS >= 1)) throw new Error(`--clients takes a whole number above 0; got "${process.argv[process.argv.indexOf("--clients") + 1]}"`);
  const { normalizeBatch, withoutIgnored } = await import("@/lib/ingest");
  const { ingestLines } = await import("@/lib/server/pipeline");
  const { createSource } = await import("@/lib/server/tokens");
  const { listIncidents } = await import("@/lib/db/incidents");
  const source = await createSource("profile", `rr_profile_${Date.now()}`);
  const base = Date.now() - 60_000;
  const notice = (thread: number, n: number) => ({
    id: `notice-${thread}-${n}`,
    threadId: `thread-${thread}`,
    turnId: "turn-1",
    type: "retry",
    at: base + n * 10,
    agent: "codex",
    provider: "openai",
    model: "gpt-5",
    attempt: 1 + (n % 4),
    maxAttempts: 5,
    error: { httpStatus: 429, code: "rate_limit_exceeded", message: "Please try again in 2s." },
  });
  const lines = (items: unknown[]) => withoutIgnored(normalizeBatch("canonical", items, { receivedAt: Date.now(), threadId: null, turnId: null }).lines).lines;
  for (let first = 0; first < THREADS; first += 500) {
    const batch = Array.from({ length: Math.min(500, THREADS - first) }, (_, i) => notice(first + i, 0));
    await ingestLines(source, lines(batch), Date.now());
  }
  const open = (await listIncidents("open")).incidents;
  if (open.length !== 1 || open[0].threadCount !== THREADS) throw new Error(`expected one open incident of ${THREADS} threads; got ${JSON.stringify(open.map((i) => i.threadCount))}`);

  const latencies: number[] = [];
  const cpuBefore = process.cpuUsage();
  const began = performance.now();
  let next = 1;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (let n = next++; n <= NOTICES; n = next++) {
        const started = performance.now();
        await ingestLines(source, lines([notice(n % THREADS, n)]), Date.now());
        latencies.push(performance.now() - started);
      }
    }),
  );
  const cpu = process.cpuUsage(cpuBefore);
  latencies.sort((a, b) => a - b);
  console.log(
    `an open incident of ${THREADS} threads: ${NOTICES} single-notice units of work from ${CLIENTS} client${CLIENTS === 1 ? "" : "s"}, p50 ${percentile(latencies, 50).toFixed(2)} ms, ` +
      `p99 ${percentile(latencies, 99).toFixed(2)} ms, CPU ${((cpu.user + cpu.system) / 1000 / NOTICES).toFixed(2)} ms each, ${(NOTICES / ((performance.now() - began) / 1000)).toFixed(0)} notices/s`,
  );
}

void main();
