import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { pathToFileURL } from "node:url";
import { chromium, type Page } from "@playwright/test";
import { ensureChromium } from "./lib/chromium.mjs";
import { fail } from "./lib/cli";
import { benchDatabase } from "./bench-insights";
import { copyDatabaseInto } from "./lib/disk";
import { postEvents } from "./lib/post-events";
import { startServer, type RunningServer } from "./lib/server";
import { percentile } from "./lib/stats";
import type { StreamThreads } from "@/lib/wire/types";

/**
 * Event → visible on the board in Chromium: the time from posting an event to the moment the
 * board the browser shows reflects it, with an idle server and while background clients post
 * batches. Each probe either brings a new retrying thread onto the board (membership and order
 * change: the page refetches) or moves a shown thread to its next attempt (one row refetches).
 * Background threads end every batch `running`, so they never push the probes' retrying rows
 * off the first page; the new ones among them still make every publication a reorder.
 * Needs a build, and a Chromium (RADAR_CHROMIUM, else Debian's, installed when missing).
 */
/** Per phase: enough that the p95 leaves out the three slowest probes rather than being the slowest. */
const PROBES = 60;
/** A probe not seen by then counts as this long: only a bound for a board that never catches up. */
const GIVE_UP_MS = 10_000;
const SEEDED_THREADS = 200;
const LOAD_CLIENTS = 4;
const LOAD_BATCH = 50;
/** Threads per background batch: runs of 10 events each. */
const LOAD_RUN = 10;
/** Between probes, so that each lands on a board at rest from the previous one. */
const PROBE_SPACING_MS = 150;

/** The person the bench signs in as (the server creates them at start). */
const PERSON = { email: "bench@radar.test", password: "bench-person-password" };


async function post(server: RunningServer, events: unknown[]): Promise<void> {
  const answer = await postEvents(server, events);
  if (answer.status < 200 || answer.status >= 300) throw new Error(`ingest failed: ${answer.status} ${answer.text}`);
}

const retry = (threadId: string, attempt: number, at: number) => ({
  threadId,
  turnId: "turn-1",
  type: "retry",
  at,
  agent: "codex",
  provider: "openai",
  model: "gpt-5.5",
  attempt,
  maxAttempts: 9,
  error: { httpStatus: 429, code: "rate_limit_exceeded", message: "Please try again in 30s." },
});

/** A background batch: LOAD_BATCH / LOAD_RUN threads, each started, retried and running again. */
function loadBatch(client: number, n: number, at: number) {
  const types = ["turn.started", "retry", "attempt", "progress", "retry", "attempt", "progress", "progress", "progress", "progress"] as const;
  return Array.from({ length: LOAD_BATCH }, (_, i) => {
    const thread = `load-${client}-${n * (LOAD_BATCH / LOAD_RUN) + Math.floor(i / LOAD_RUN)}`;
    const type = types[i % LOAD_RUN];
    const base = { threadId: thread, turnId: "turn-1", type, at: at + i, agent: "claude-code", provider: "anthropic", model: "claude-sonnet" };
    if (type === "retry") return { ...base, attempt: 1, maxAttempts: 5, error: { httpStatus: 529, code: "overloaded_error", message: "Overloaded" } };
    if (type === "attempt") return { ...base, attempt: 1 };
    return base;
  });
}

/** In the page: resolves with the browser's Date.now() once `selector` matches an element whose text includes `text`. */
async function installWatcher(page: Page): Promise<void> {
  // A string, not a function: tsx's helpers (__name) do not exist in the page.
  await page.evaluate(`window.__radarSeen = (selector, text) => new Promise((resolve) => {
    const seen = () => Array.from(document.querySelectorAll(selector)).some((element) => (element.textContent || "").includes(text));
    if (seen()) return resolve(Date.now());
    const observer = new MutationObserver(() => {
      if (!seen()) return;
      observer.disconnect();
      resolve(Date.now());
    });
    observer.observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  })`);
}

/**
 * With RADAR_BENCH_VERBOSE: the page's own log of when each live notice arrived and each thread
 * request started and ended (browser clock), so a probe's time splits into delivery, request and
 * render.
 */
const TRACE_SCRIPT = `(() => {
  const log = (window.__radarTrace = []);
  const NativeSource = window.EventSource;
  window.EventSource = class extends NativeSource {
    constructor(...args) {
      super(...args);
      this.addEventListener("threads", (event) => log.push({ at: Date.now(), what: "notice", data: event.data }));
    }
  };
  const nativeFetch = window.fetch;
  window.fetch = async (input, init) => {
    const url = String(input instanceof Request ? input.url : input);
    if (!url.includes("/api/v1/threads")) return nativeFetch(input, init);
    const entry = { at: Date.now(), what: url.includes("keys=") ? "rows" : "page", url };
    log.push(entry);
    const response = await nativeFetch(input, init);
    const body = await response.clone().text();
    entry.end = Date.now();
    entry.bytes = body.length;
    return response;
  };
})()`;

interface TraceEntry {
  at: number;
  what: "notice" | "rows" | "page";
  end?: number;
  data?: string;
}

/**
 * One probe's split: when its POST was answered, when the notice naming its thread arrived (with
 * its row, or keys only), the request that brought its row, and every notice meanwhile (its
 * threads, `r` with rows, `k` keys only).
 */
function split(trace: TraceEntry[], sent: number, stored: number, seen: number, key: number | undefined): string {
  const since = (t: number | undefined) => (t === undefined ? "—" : `${t - sent}`);
  const after = trace.filter((e) => e.at >= sent && e.at <= seen);
  const data = (e: TraceEntry) => JSON.parse(e.data!) as StreamThreads;
  const notice = after.find((e) => e.what === "notice" && key !== undefined && data(e).threads.some((t) => t.key === key));
  const carried = notice !== undefined && (data(notice).rows ?? []).some((row) => row.key === key);
  const fetchedBy = after.filter((e) => e.what !== "notice" && e.end !== undefined && e.end <= seen).at(-1);
  const requests = after.filter((e) => e.what !== "notice").map((e) => `${e.what} ${since(e.at)}→${since(e.end)}`);
  const by = carried ? "the notice" : fetchedBy ? `${fetchedBy.what} ${since(fetchedBy.at)}→${since(fetchedBy.end)}` : "—";
  const notices = after.filter((e) => e.what === "notice").map((e) => `${since(e.at)}:${data(e).threads.length}${data(e).rows ? "r" : "k"}`);
  return `stored at ${since(stored)}; notice at ${since(notice?.at)}${notice ? (carried ? " with its row" : data(notice).rows ? " with rows, not its own" : " keys only") : ""}; brought by ${by}; requests ${requests.join(", ") || "none"}; notices ${notices.join(" ")}`;
}

async function probe(page: Page, server: RunningServer, i: number, shown: string[]): Promise<Probe> {
  // Even probes add a thread; odd ones move the previous probe's thread to its next attempt.
  const isNew = i % 2 === 0 || shown.length === 0;
  const threadId = isNew ? `probe-${i}` : shown[shown.length - 1];
  const attempt = isNew ? 1 : 2;
  const selector = `[data-testid="thread-row"][data-thread-id="${threadId}"] [data-testid="retry-attempt"]`;
  const seen = page.evaluate(`window.__radarSeen(${JSON.stringify(selector)}, ${JSON.stringify(`Retrying ${attempt}/9`)})`) as Promise<number>;
  const sent = Date.now();
  await post(server, [retry(threadId, attempt, sent)]);
  const stored = Date.now();
  const at = await Promise.race([seen, new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), GIVE_UP_MS))]);
  if (isNew) shown.push(threadId);
  if (process.env.RADAR_BENCH_VERBOSE) {
    const trace = (await page.evaluate("window.__radarTrace.splice(0)")) as TraceEntry[];
    const key = (await page.locator(`[data-testid="thread-row"][data-thread-id="${threadId}"]`).getAttribute("data-thread-key").catch(() => null)) ?? undefined;
    process.stderr.write(`  ${threadId}: ${split(trace, sent, stored, at, key === undefined ? undefined : Number(key))}\n`);
  }
  return { kind: isNew ? "new row" : "changed row", ms: Math.min(GIVE_UP_MS, at - sent), afterStoredMs: Math.min(GIVE_UP_MS, Math.max(0, at - stored)) };
}

/** `afterStoredMs`: from the ingest answer to the screen, the board's own share of `ms`. */
interface Probe {
  kind: "new row" | "changed row";
  ms: number;
  afterStoredMs: number;
}

interface Latency {
  probes: number;
  p50Ms: number;
  p95Ms: number;
}

const summary = (values: number[]): Latency => {
  const sorted = values.toSorted((a, b) => a - b);
  return { probes: sorted.length, p50Ms: Math.round(percentile(sorted, 50)), p95Ms: Math.round(percentile(sorted, 95)) };
};

export interface BoardBench {
  idle: Latency;
  loaded: Latency & { batchesPerSecond: number; newRow: Latency; changedRow: Latency; afterStored: Latency };
  /** What the board's browser fetched under load: requests and bytes per second. */
  browser: { requestsPerSecond: number; kilobytesPerSecond: number };
}

async function measure(page: Page, server: RunningServer, from: number): Promise<Probe[]> {
  const shown: string[] = [];
  const results: Probe[] = [];
  for (let i = from; i < from + PROBES; i++) {
    results.push(await probe(page, server, i, shown));
    if (process.env.RADAR_BENCH_VERBOSE) process.stderr.write(`${results.at(-1)!.kind} ${results.at(-1)!.ms} ms\n`);
    await new Promise((resolve) => setTimeout(resolve, PROBE_SPACING_MS));
  }
  return results;
}

export async function benchBoard(): Promise<BoardBench> {
  // Before the server: installing a browser may take a minute.
  const executablePath = ensureChromium();
  const server = await startServer({ RADAR_ADMIN_EMAIL: PERSON.email, RADAR_ADMIN_PASSWORD: PERSON.password });
  const browser = await chromium.launch({
    ...(executablePath ? { executablePath } : {}),
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
  });
  try {
    // A fleet already on the board: the page the browser reads is a real one.
    const start = Date.now() - 60_000;
    for (let i = 0; i < SEEDED_THREADS; i += 50) {
      await post(server, Array.from({ length: 50 }, (_, j) => ({ threadId: `seed-${i + j}`, type: "turn.started", at: start + i + j, agent: "codex" })));
    }
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await context.newPage();
    if (process.env.RADAR_BENCH_VERBOSE) await page.addInitScript(TRACE_SCRIPT);
    // Signed in as a person, as the board is used (a session, not an API key).
    await page.goto(`${server.url}/sign-in`);
    await page.getByTestId("sign-in-email").fill(PERSON.email);
    await page.getByTestId("sign-in-password").fill(PERSON.password);
    await page.getByTestId("sign-in-submit").click();
    await page.getByTestId("signed-in-role").waitFor();
    let requests = 0;
    let bytes = 0;
    // With RADAR_BENCH_VERBOSE: every request the page made under load, by path (its share of the browser's connections).
    const byPath = new Map<string, number>();
    page.on("request", (request) => {
      const url = new URL(request.url());
      const key = `${url.pathname}${url.searchParams.has("_rsc") || request.headers()["rsc"] ? " (RSC)" : ""}`;
      byPath.set(key, (byPath.get(key) ?? 0) + 1);
    });
    page.on("requestfinished", (request) => {
      if (!new URL(request.url()).pathname.startsWith("/api/v1/threads")) return;
      requests++;
      void request.sizes().then((sizes) => (bytes += sizes.responseBodySize + sizes.responseHeadersSize)).catch(() => {});
    });
    await page.goto(`${server.url}/`);
    await page.locator('[data-testid="live-indicator"][data-status="live"]').waitFor();
    await installWatcher(page);

    const idle = await measure(page, server, 0);

    let loading = true;
    let batches = 0;
    const load = Array.from({ length: LOAD_CLIENTS }, async (_, client) => {
      for (let n = 0; loading; n++) {
        await post(server, loadBatch(client, n, Date.now()));
        batches++;
      }
    });
    const loadStarted = performance.now();
    requests = 0;
    bytes = 0;
    byPath.clear();
    // With RADAR_BENCH_TRACE=<file>: a Chromium trace of the loaded probes (chrome://tracing opens it; scripts/trace-summary.ts sums it).
    const tracePath = process.env.RADAR_BENCH_TRACE;
    if (tracePath) await browser.startTracing(page, { path: tracePath, categories: ["devtools.timeline", "disabled-by-default-devtools.timeline", "blink", "v8.execute"] });
    // With RADAR_BENCH_JSPROFILE=<file>: a CPU profile of the page's JavaScript over the loaded probes (a .cpuprofile, as DevTools saves one).
    const profilePath = process.env.RADAR_BENCH_JSPROFILE;
    const profiler = profilePath ? await page.context().newCDPSession(page) : null;
    if (profiler) {
      await profiler.send("Profiler.enable");
      await profiler.send("Profiler.setSamplingInterval", { interval: 200 });
      await profiler.send("Profiler.start");
    }
    const loaded = await measure(page, server, PROBES);
    if (profiler) fs.writeFileSync(profilePath!, JSON.stringify((await profiler.send("Profiler.stop")).profile));
    if (tracePath) await browser.stopTracing();
    if (process.env.RADAR_BENCH_VERBOSE) {
      const counts = [...byPath].sort((a, b) => b[1] - a[1]).slice(0, 12);
      process.stderr.write(`requests under load by path: ${counts.map(([path, n]) => `${path} ${n}`).join(", ")}\n`);
    }
    const seconds = (performance.now() - loadStarted) / 1000;
    const fetched = { requests, bytes };
    loading = false;
    await Promise.all(load);
    return {
      idle: summary(idle.map((r) => r.ms)),
      loaded: {
        ...summary(loaded.map((r) => r.ms)),
        batchesPerSecond: Math.round(batches / seconds),
        newRow: summary(loaded.filter((r) => r.kind === "new row").map((r) => r.ms)),
        changedRow: summary(loaded.filter((r) => r.kind === "changed row").map((r) => r.ms)),
        afterStored: summary(loaded.map((r) => r.afterStoredMs)),
      },
      browser: { requestsPerSecond: +(fetched.requests / seconds).toFixed(1), kilobytesPerSecond: Math.round(fetched.bytes / 1024 / seconds) },
    };
  } finally {
    await browser.close();
    await server.stop();
  }
}

export function formatBoardBench(result: BoardBench): string {
  const { idle, loaded, browser } = result;
  return [
    `board, event → visible in Chromium, idle: p50 ${idle.p50Ms} ms, p95 ${idle.p95Ms} ms (${idle.probes} probes)`,
    `board, event → visible while ${LOAD_CLIENTS} clients post batches of ${LOAD_BATCH} (${loaded.batchesPerSecond} batches/s): ` +
      `p50 ${loaded.p50Ms} ms, p95 ${loaded.p95Ms} ms (target p95 < 300 ms); new row p50/p95 ${loaded.newRow.p50Ms}/${loaded.newRow.p95Ms} ms, ` +
      `changed row ${loaded.changedRow.p50Ms}/${loaded.changedRow.p95Ms} ms; from the ingest answer to the screen p50/p95 ${loaded.afterStored.p50Ms}/${loaded.afterStored.p95Ms} ms`,
    `board, what the browser fetched under load: ${browser.requestsPerSecond} thread requests/s, ${browser.kilobytesPerSecond} KiB/s`,
  ].join("\n");
}

/**
 * The board's API at 10,000 threads and 1,000,000 events (the insights bench's database): the
 * built app serving GET /api/v1/threads as the board asks for it, p50 of a few requests per view.
 */
const API_VIEWS = [
  "order=attention",
  "order=attention&page=100",
  "order=attention&status=exhausted",
  "order=attention&provider=anthropic&model=claude-sonnet",
  "order=attention&q=thread-99",
  "keys=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20",
];
const API_RUNS = 15;
const WARM_MS = 4_000;

/**
 * The board bench's background load alone, without the browser: LOAD_CLIENTS clients posting
 * LOAD_BATCH-event batches for `seconds`, as many as the server takes. Their lines carry no `id`,
 * so each is keyed by a derived key, as every native and OTLP line is (lib/ingest/key.ts).
 */
export async function benchLoad(seconds = 20): Promise<{ batchesPerSecond: number; p50Ms: number; p95Ms: number; events: number; cpuMsPerBatch: number | null }> {
  const server = await startServer();
  try {
    const latencies: number[] = [];
    const cpuBefore = server.mainThreadCpuMs();
    const until = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: LOAD_CLIENTS }, async (_, client) => {
        for (let n = 0; performance.now() < until; n++) {
          const started = performance.now();
          await post(server, loadBatch(client, n, Date.now()));
          latencies.push(performance.now() - started);
        }
      }),
    );
    const cpuAfter = server.mainThreadCpuMs();
    const sorted = latencies.toSorted((a, b) => a - b);
    return {
      cpuMsPerBatch: cpuBefore === null || cpuAfter === null ? null : +((cpuAfter - cpuBefore) / latencies.length).toFixed(2),
      batchesPerSecond: Math.round(latencies.length / seconds),
      p50Ms: +percentile(sorted, 50).toFixed(1),
      p95Ms: +percentile(sorted, 95).toFixed(1),
      events: latencies.length * LOAD_BATCH,
    };
  } finally {
    await server.stop();
  }
}

export interface BoardApiBench {
  threads: number;
  events: number;
  views: { view: string; p50Ms: number }[];
}

export async function benchBoardApi(databaseFile?: string): Promise<BoardApiBench> {
  // The one benchmark database of this process (bench-insights.ts's) unless one is named; copied,
  // as the server migrates it.
  const built = copyDatabase(databaseFile ?? benchDatabase().file);
  const server = await startServer({}, { databaseFile: built.file });
  try {
    return { threads: 10_000, events: built.events, views: await timeBoardApi(server) };
  } finally {
    await server.stop();
    fs.rmSync(built.dir, { recursive: true, force: true });
  }
}

/** p50 of each board view over HTTP on a running server, after a warm-up (on either store). */
export async function timeBoardApi(server: RunningServer): Promise<BoardApiBench["views"]> {
    const timed = async (view: string) => {
      const started = performance.now();
      const response = await fetch(`${server.url}/api/v1/threads?${view}`, { headers: { authorization: `Bearer ${server.apiKey}` } });
      if (!response.ok) throw new Error(`GET /api/v1/threads?${view}: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
      return performance.now() - started;
    };
    // Untimed passes over every view first: they warm statement caches, and let the server's
    // first seconds on a database of this size (its start-up passes) go by.
    const warmUntil = performance.now() + WARM_MS;
    do for (const view of API_VIEWS) await timed(view);
    while (performance.now() < warmUntil);
    const views: BoardApiBench["views"] = [];
    for (const view of API_VIEWS) {
      const times: number[] = [];
      for (let i = 0; i < API_RUNS; i++) times.push(await timed(view));
      views.push({ view, p50Ms: +percentile(times.toSorted((a, b) => a - b), 50).toFixed(1) });
    }
    return views;
}

function copyDatabase(file: string): { dir: string; file: string; events: number } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-bench-board-"));
  const copy = copyDatabaseInto(dir, file);
  const sql = new Database(copy, { readonly: true });
  const events = sql.prepare(`SELECT count(*) FROM "Event"`).pluck().get() as number;
  sql.close();
  return { dir, file: copy, events };
}

export function formatBoardApiBench(result: BoardApiBench): string {
  return [
    `board API at ${result.threads.toLocaleString("en")} threads / ${result.events.toLocaleString("en")} events (target p50 < 20 ms):`,
    ...result.views.map((v) => `  GET /api/v1/threads?${v.view}: p50 ${v.p50Ms} ms`),
  ].join("\n");
}

// `npx tsx scripts/bench-board.ts [api [database] | load [seconds]]`: this part alone (the browser,
// the API at 10k threads, or the background load without the browser).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === "api") benchBoardApi(process.argv[3]).then((result) => console.log(formatBoardApiBench(result)));
  else if (process.argv[2] === "load") {
    const seconds = process.argv[3] === undefined ? undefined : Number(process.argv[3]);
    if (seconds !== undefined && !(Number.isFinite(seconds) && seconds > 0)) fail("bench-board", `load takes a number of seconds above 0; got "${process.argv[3]}"`);
    benchLoad(seconds).then((r) =>
      console.log(`${LOAD_CLIENTS} clients posting batches of ${LOAD_BATCH} without ids: ${r.batchesPerSecond} batches/s, p50 ${r.p50Ms} ms, p95 ${r.p95Ms} ms per batch, the ingest thread's CPU ${r.cpuMsPerBatch} ms per batch (${r.events.toLocaleString("en")} events)`),
    );
  } else benchBoard().then((result) => console.log(formatBoardBench(result)));
}
