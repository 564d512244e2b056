import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { benchDatabase } from "./bench-insights";
import { copyDatabaseInto } from "./lib/disk";
import { freePort } from "./lib/port.mjs";
import { postEvents } from "./lib/post-events";
import { startServer, type RunningServer } from "./lib/server";
import { median, percentile } from "./lib/stats";
import { within } from "../lib/within";

/**
 * Heavy reads against ingestion, over HTTP on the built app serving a copy of the 1M-event
 * database of bench-insights.ts: single-event POST latency alone, then while two clients loop over
 * the metrics scrape, a 7-day insights view and a 24-hour attempts export. The server's event loop
 * is watched from inside (scripts/lib/loop-delay.mjs): its longest stall while an export runs
 * alone is what every request waiting behind that export waits at worst. The longest stall is
 * reported three ways, to tell who caused it: ingestion alone, the readers alone, and both.
 */
const POSTS = 1_500;
const POST_CLIENTS = 4;
const READERS = 2;
const THREADS = 100;
const RUNS = 3;
/** How long the readers loop with no ingestion beside them. */
const READERS_ONLY_MS = 8_000;
const READS = ["/api/metrics", "/api/v1/insights?range=7d", "/api/v1/exports/attempts?range=24h&format=csv"] as const;
/** Each reader alone, to name who causes the longest stall: the heavy reads and the pages a person opens. */
const READERS_BY_NAME: ReadonlyArray<readonly [string, string]> = [
  ["metrics scrape", READS[0]],
  ["insights 7d (API)", READS[1]],
  ["attempts export 24h", READS[2]],
  ["board page", "/"],
  ["board API", "/api/v1/threads?order=attention"],
  ["insights page 7d", "/insights?range=7d"],
  ["thread page", "/threads/reads-0-0"],
];

const round = (ms: number) => +ms.toFixed(1);

interface Loop {
  maxMs: number;
  p99Ms: number;
  /** The longest stall without the time the thread sat idle or waited for a core: an upper bound of its longest synchronous stretch (null where Linux cannot tell). */
  maxOwnMs: number | null;
  /** The most it waited for a core within one stall: the machine's share. */
  maxWaitedMs: number | null;
}

/** The server's event-loop stalls since the last call. */
async function loopWindow(port: number): Promise<Loop> {
  return (await fetch(`http://127.0.0.1:${port}/reset`)).json() as Promise<Loop>;
}

/** `POSTS` single-event POSTs from `POST_CLIENTS` clients: each thread's turn, retries and progress. */
async function singlePosts(server: RunningServer, round: number): Promise<number[]> {
  const latencies: number[] = [];
  const base = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: POST_CLIENTS }, async () => {
      while (next < POSTS) {
        const i = next++;
        const type = (["turn.started", "retry", "attempt", "progress"] as const)[Math.floor(i / THREADS) % 4];
        const event = {
          id: `reads-${round}-${i}`,
          threadId: `reads-${round}-${i % THREADS}`,
          turnId: "turn-1",
          type,
          at: base + i,
          agent: "codex",
          provider: "openai",
          model: "gpt-5",
          ...(type === "retry" ? { attempt: 1, maxAttempts: 5, error: { httpStatus: 429, code: "rate_limit_exceeded", message: "Please try again in 2s." } } : {}),
          ...(type === "attempt" ? { attempt: 1 } : {}),
        };
        const answer = await postEvents(server, event);
        if (answer.status < 200 || answer.status >= 300) throw new Error(`ingest failed: ${answer.status}`);
        latencies.push(answer.ms);
      }
    }),
  );
  return latencies.sort((a, b) => a - b);
}

/** One read to its last byte; its time in ms. */
async function read(server: RunningServer, pathname: string, signal?: AbortSignal): Promise<number> {
  const started = performance.now();
  const response = await server.fetch(pathname, { signal });
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${pathname}: ${response.status}`);
  return performance.now() - started;
}

interface ReaderStall {
  name: string;
  maxMs: number;
  ownMs: number | null;
  cpuMs: number | null;
}

export interface ReadsBench {
  posts: number;
  clients: number;
  aloneP99Ms: number;
  underReadsP99Ms: number;
  ratio: number;
  readsDone: number;
  /** Each reader alone, RUNS times: the longest event-loop stall it caused, and that window's longest own work (Loop.maxOwnMs). */
  stallByReader: ReaderStall[];
  /** The longest event-loop stall: while ingestion runs alone, while only the readers run, and while both do. */
  loopIngestionMaxMs: number;
  loopReadersOnlyMaxMs: number;
  loopUnderReadsMaxMs: number;
  /** The same windows' 99th percentile of event-loop delay: less sensitive than the maximum to the machine descheduling the server. */
  loopP99Ms: { ingestion: number; readersOnly: number; underReads: number };
  /**
   * The same windows' longest stall without the time the thread sat idle or waited for a core
   * (Loop.maxOwnMs), what the server's own work decides, and the longest wait for a core
   * (Loop.maxWaitedMs), what the machine adds.
   */
  loopOwnMaxMs: { ingestion: number | null; readersOnly: number | null; underReads: number | null };
  loopWaitedMaxMs: { ingestion: number | null; readersOnly: number | null; underReads: number | null };
  exportMs: number;
  exportLoopMaxMs: number;
  metricsMs: number;
  insights7dMs: number;
}

/** The built app on a copy of `databaseFile`, its event loop watched from inside (scripts/lib/loop-delay.mjs, on `loopPort`). */
async function watchedServer(databaseFile: string): Promise<{ server: RunningServer; loopPort: number; stop(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-bench-reads-"));
  const file = copyDatabaseInto(dir, databaseFile);
  const loopPort = await freePort();
  const loopModule = pathToFileURL(path.join(import.meta.dirname, "lib", "loop-delay.mjs")).href;
  const server = await startServer(
    { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${loopModule}`.trim(), RADAR_BENCH_LOOP_PORT: String(loopPort) },
    { databaseFile: file },
  );
  const stop = async () => {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { server, loopPort, stop };
}

export async function benchReads(databaseFile = benchDatabase().file): Promise<ReadsBench> {
  const { server, loopPort, stop } = await watchedServer(databaseFile);
  try {
    // Warm: compiled routes, prepared statements, the page cache.
    for (const pathname of READS) await read(server, pathname);
    await singlePosts(server, 0);

    const metricsMs = median(await sequence(RUNS, () => read(server, READS[0])));
    const insights7dMs = median(await sequence(RUNS, () => read(server, READS[1])));
    const exports = await sequence(RUNS, async () => {
      await loopWindow(loopPort);
      const ms = await read(server, READS[2]);
      return { ms, loop: await loopWindow(loopPort) };
    });
    const exportMs = median(exports.map((e) => e.ms));
    const exportLoopMaxMs = median(exports.map((e) => e.loop.maxMs));

    await loopWindow(loopPort);
    const alone = median((await sequence(RUNS, async (i) => percentile(await singlePosts(server, 1 + i), 99))));
    const loopIngestion = await loopWindow(loopPort);
    const readersOnly = await withReaders(server, async () => {
      await loopWindow(loopPort);
      await new Promise((resolve) => setTimeout(resolve, READERS_ONLY_MS));
      return loopWindow(loopPort);
    });
    const { value: underReads, readsDone } = await withReaders(server, async () => {
      await loopWindow(loopPort);
      const p99 = median(await sequence(RUNS, async (i) => percentile(await singlePosts(server, 10 + i), 99)));
      return { p99, loop: await loopWindow(loopPort) };
    });
    const under = underReads.p99;
    const stallByReader = await stallsByReader(server, loopPort);
    const loopUnderReads = underReads.loop;
    return {
      posts: POSTS,
      clients: POST_CLIENTS,
      aloneP99Ms: round(alone),
      underReadsP99Ms: round(under),
      ratio: +(under / alone).toFixed(2),
      readsDone,
      stallByReader,
      loopIngestionMaxMs: loopIngestion.maxMs,
      loopReadersOnlyMaxMs: readersOnly.value.maxMs,
      loopUnderReadsMaxMs: loopUnderReads.maxMs,
      loopP99Ms: { ingestion: loopIngestion.p99Ms, readersOnly: readersOnly.value.p99Ms, underReads: loopUnderReads.p99Ms },
      loopOwnMaxMs: { ingestion: loopIngestion.maxOwnMs, readersOnly: readersOnly.value.maxOwnMs, underReads: loopUnderReads.maxOwnMs },
      loopWaitedMaxMs: { ingestion: loopIngestion.maxWaitedMs, readersOnly: readersOnly.value.maxWaitedMs, underReads: loopUnderReads.maxWaitedMs },
      exportMs: round(exportMs),
      exportLoopMaxMs,
      metricsMs: round(metricsMs),
      insights7dMs: round(insights7dMs),
    };
  } finally {
    await stop();
  }
}

/**
 * Each reader of READERS_BY_NAME alone, RUNS times after a warm-up: the longest event-loop stall
 * it caused, and the ingest thread's CPU per read (null where /proc cannot tell), which a busy
 * machine disturbs less than a stall.
 */
async function stallsByReader(server: RunningServer, loopPort: number): Promise<ReaderStall[]> {
  const stalls: ReaderStall[] = [];
  for (const [name, pathname] of READERS_BY_NAME) {
    await read(server, pathname);
    await loopWindow(loopPort);
    const cpuBefore = server.mainThreadCpuMs();
    await sequence(RUNS, () => read(server, pathname));
    const cpuAfter = server.mainThreadCpuMs();
    const cpuMs = cpuBefore === null || cpuAfter === null ? null : round((cpuAfter - cpuBefore) / RUNS);
    const loop = await loopWindow(loopPort);
    stalls.push({ name, maxMs: loop.maxMs, ownMs: loop.maxOwnMs, cpuMs });
  }
  return stalls;
}

/**
 * `--readers`: only the longest stall per reader alone, on a server whose start-up work is done
 * (the usage count of a copied database, lib/server/usage.ts, fills turns for its first seconds):
 * a quick comparison of two builds of the pages and reads.
 */
export async function benchReaders(databaseFile: string): Promise<string> {
  const { server, loopPort, stop } = await watchedServer(databaseFile);
  try {
    for (const [, pathname] of READERS_BY_NAME) await read(server, pathname);
    await settled(server);
    const stalls = await stallsByReader(server, loopPort);
    return `per reader alone (${RUNS} reads each), longest event-loop stall / its own work at most / ingest-thread CPU per read: ${stalls.map((s) => `${s.name} ${s.maxMs} / ${s.ownMs} / ${s.cpuMs} ms`).join(", ")}`;
  } finally {
    await stop();
  }
}

/** Waits (30 s at most) until the server's ingest thread spends under 5 % of a second's CPU: its start-up work is done. */
async function settled(server: RunningServer): Promise<void> {
  for (let i = 0; i < 30; i++) {
    const before = server.mainThreadCpuMs();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const after = server.mainThreadCpuMs();
    if (before === null || after === null || after - before < 50) return;
  }
}

/** `READERS` clients looping over `READS` while `during` runs (after half a second to get going). */
async function withReaders<T>(server: RunningServer, during: () => Promise<T>): Promise<{ value: T; readsDone: number }> {
  const controller = new AbortController();
  let readsDone = 0;
  const readers = Array.from({ length: READERS }, async (_, r) => {
    for (let i = r; !controller.signal.aborted; i++) {
      try {
        await read(server, READS[i % READS.length], controller.signal);
        readsDone++;
      } catch (error) {
        if (!controller.signal.aborted) throw error;
      }
    }
  });
  await new Promise((resolve) => setTimeout(resolve, 500));
  try {
    return { value: await during(), readsDone };
  } finally {
    controller.abort();
    await readersEnded(readers);
  }
}

/** How long the readers may take to end once aborted. */
const READERS_END_MS = 10_000;

/**
 * Waits for the aborted readers, a bounded while: once, an aborted read's body stayed pending
 * with no connection left, and the whole bench waited for it for good. A reader's own error
 * (not its abort) still fails the bench.
 */
async function readersEnded(readers: Promise<void>[]): Promise<void> {
  const ended = await within(Promise.allSettled(readers), READERS_END_MS);
  if (!ended.settled) {
    process.stderr.write(`bench-reads: a reader had not ended ${READERS_END_MS / 1000} s after its abort; the bench goes on without it\n`);
    return;
  }
  const failed = ended.value.find((result) => result.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
}

async function sequence<T>(times: number, run: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < times; i++) out.push(await run(i));
  return out;
}

export function formatReadsBench(r: ReadsBench): string {
  return [
    `heavy reads vs ingestion at 1M events (HTTP, median of ${RUNS}): single-event POST p99 ${r.aloneP99Ms} ms alone, ${r.underReadsP99Ms} ms while ${READERS} clients loop over metrics, 7-day insights and a 24 h export (${r.readsDone} reads) → ×${r.ratio} (target ≤ 2)`,
    `longest event-loop stall on the ingest thread: ${r.loopReadersOnlyMaxMs} ms with the readers only, ${r.loopUnderReadsMaxMs} ms with readers + ingestion, ${r.loopIngestionMaxMs} ms with ingestion alone (target single-digit); p99 of event-loop delay ${r.loopP99Ms.readersOnly} / ${r.loopP99Ms.underReads} / ${r.loopP99Ms.ingestion} ms`,
    `the same stalls without the time the ingest thread sat idle or waited for a core (its own work: the longest synchronous stretch at most): ${r.loopOwnMaxMs.readersOnly} / ${r.loopOwnMaxMs.underReads} / ${r.loopOwnMaxMs.ingestion} ms (target single-digit); the longest wait for a core: ${r.loopWaitedMaxMs.readersOnly} / ${r.loopWaitedMaxMs.underReads} / ${r.loopWaitedMaxMs.ingestion} ms`,
    `longest event-loop stall per reader alone (${RUNS} reads each), and its own work at most: ${r.stallByReader.map((s) => `${s.name} ${s.maxMs} ms (${s.ownMs ?? "?"})`).join(", ")}; the longest: ${r.stallByReader.toSorted((a, b) => b.maxMs - a.maxMs)[0]?.name}, the most own work: ${r.stallByReader.toSorted((a, b) => (b.ownMs ?? 0) - (a.ownMs ?? 0))[0]?.name}`,
    `export attempts ?range=24h as CSV over HTTP: ${r.exportMs} ms, longest event-loop stall meanwhile ${r.exportLoopMaxMs} ms (target single-digit)`,
    `over HTTP at 1M events: metrics scrape ${r.metricsMs} ms (target < 50 ms), insights ?range=7d ${r.insights7dMs} ms (target < 100 ms)`,
  ].join("\n");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // `npx tsx scripts/bench-reads.ts [database] [--readers]`: a database already built saves minutes.
  const [database, only] = process.argv.slice(2);
  if (only === "--readers") benchReaders(database ?? benchDatabase().file).then(console.log);
  else benchReads(database).then((result) => console.log(formatReadsBench(result)));
}
