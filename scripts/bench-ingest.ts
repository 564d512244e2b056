import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { migrate } from "../lib/db/migrate";
import { fail } from "./lib/cli";
import { postEvents } from "./lib/post-events";
import { startServer, type RunningServer } from "./lib/server";
import { percentile } from "./lib/stats";

/**
 * Ingestion over HTTP against the built app, next to raw better-sqlite3 inserts of the same
 * event rows on the same machine. Batches of 500 canonical events, then single-event POSTs from
 * a few concurrent clients. Needs a build (`npm test` or `npm start` makes one). A batch holds
 * what one source sends in a moment: runs of events from a few threads (25 per batch), as a relay
 * does; the cost per batch grows with the number of distinct threads it touches (one projection
 * write each).
 */
const BATCH = 500;
const BATCHES = 100;
/**
 * Batches sent (and inserted raw) before the measured ones, not counted: a server just started
 * compiles its ingest path and prepares its statements during its first few batches (the first
 * three took 67–89 ms against 21–25 ms later on this machine), a cost paid once per start, not per
 * batch. Their mean is printed apart.
 */
const WARM_UP_BATCHES = 10;
const SINGLES = 6_000;
const SINGLE_CLIENTS = 8;
const THREADS = 1_000;
/** Single-event POSTs from one client alone, each next to a GET /api/health (a request's own cost). */
const ALONE = 500;

/** Events a source reports: runs of 20 consecutive events per thread, so a batch of 500 spans 25 threads. */
const RUN = 20;

export function event(i: number, base: number) {
  const thread = Math.floor(i / RUN) % THREADS;
  const step = (i % RUN) + RUN * Math.floor(i / (RUN * THREADS));
  const types = ["turn.started", "retry", "attempt", "progress", "retry", "attempt", "progress", "turn.completed"] as const;
  const type = types[step % types.length];
  return {
    id: `bench-${base}-${i}`,
    threadId: `bench-thread-${base}-${thread}`,
    turnId: `turn-${Math.floor(step / types.length)}`,
    type,
    at: base + i,
    agent: "codex",
    provider: "openai",
    model: "gpt-5.5",
    ...(type === "retry" ? { attempt: step % 8 === 1 ? 1 : 2, maxAttempts: 5, error: { httpStatus: 429, code: "rate_limit_exceeded", message: "Please try again in 2s." } } : {}),
    ...(type === "attempt" ? { attempt: step % 8 === 2 ? 1 : 2 } : {}),
  };
}


/** One POST of `body` (an event or a batch) that must store something; its time in ms. */
export async function postJson(server: RunningServer, body: unknown): Promise<number> {
  const answer = await postEvents(server, body);
  if (answer.status < 200 || answer.status >= 300 || (JSON.parse(answer.text) as { accepted: number }).accepted === 0) {
    throw new Error(`ingest failed: ${answer.status} ${answer.text}`);
  }
  return answer.ms;
}

/** The same POST through fetch, for `--clients` alone: what the benches' client cost before post-events.ts. */
async function postWithFetch(server: RunningServer, body: unknown): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${server.url}/api/v1/events`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const result = (await response.json()) as { accepted: number };
  if (!response.ok || result.accepted === 0) throw new Error(`ingest failed: ${response.status} ${JSON.stringify(result)}`);
  return performance.now() - started;
}

/**
 * The same rows, inserted the fastest way SQLite allows: prepared statements in one transaction
 * per batch. `insert` answers how long a batch took (ms).
 */
function rawInserter(): { insert(rows: ReturnType<typeof event>[]): number; close(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-bench-raw-"));
  const db = new Database(path.join(dir, "raw.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  migrate(db);
  db.prepare(`INSERT INTO "Source" (id, name, createdAt) VALUES ('s', 's', 0)`).run();
  const statement = db.prepare(
    `INSERT INTO "Event" (sourceId, idempotencyKey, format, type, at, receivedAt, turnId, attempt, httpStatus, code, message, raw, normalized)
     VALUES ('s', ?, 'canonical', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const batch = db.transaction((rows: ReturnType<typeof event>[]) => {
    for (const row of rows) {
      const json = JSON.stringify(row);
      const error = (row as { error?: { httpStatus: number; code: string; message: string } }).error;
      statement.run(row.id, row.type, row.at, row.at, row.turnId, (row as { attempt?: number }).attempt ?? null, error?.httpStatus ?? null, error?.code ?? null, error?.message ?? null, json, json);
    }
  });
  return {
    insert(rows) {
      const started = performance.now();
      batch(rows);
      return performance.now() - started;
    },
    close() {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface IngestBench {
  batch: { events: number; eventsPerSecond: number; p50Ms: number; p99Ms: number };
  /** The mean time of the first batches after the server started (WARM_UP_BATCHES, not in `batch`). */
  warmUp: { batches: number; meanMs: number };
  raw: { rowsPerSecond: number };
  ratio: number;
  single: { requests: number; clients: number; requestsPerSecond: number; p50Ms: number; p99Ms: number; clientCpuMsPerRequest: number; serverCpuMsPerRequest: number | null };
  /**
   * A request's own share of a single-event POST: one client alone, each POST followed by a GET
   * /api/health, a route that does next to nothing answered the same way (by the listener, with
   * the same wrapper), so their difference is the ingest work.
   */
  alone: { postP50Ms: number; healthP50Ms: number };
  /** The server's peak resident memory over both runs (null where /proc cannot tell). */
  serverPeakRssMiB: number | null;
}

export async function benchIngest(): Promise<IngestBench> {
  const server = await startServer();
  try {
    const base = Date.now() - 86_400_000;
    const rows = Array.from({ length: BATCH * BATCHES }, (_, i) => event(i, base));
    const batchLatencies: number[] = [];
    // Each batch goes over HTTP, then the same rows into the raw database: both see the same
    // machine, so a busy neighbour slows both and the ratio stays.
    const raw = rawInserter();
    let rawMs = 0;
    let warmUpMs = 0;
    try {
      const warmUpBase = base - 10_000_000;
      for (let b = 0; b < WARM_UP_BATCHES; b++) {
        const batch = Array.from({ length: BATCH }, (_, i) => event(b * BATCH + i, warmUpBase));
        warmUpMs += await postJson(server, batch);
        raw.insert(batch);
      }
      for (let i = 0; i < rows.length; i += BATCH) {
        const batch = rows.slice(i, i + BATCH);
        batchLatencies.push(await postJson(server, batch));
        rawMs += raw.insert(batch);
      }
    } finally {
      raw.close();
    }
    const batchSeconds = batchLatencies.reduce((sum, ms) => sum + ms, 0) / 1000;
    batchLatencies.sort((a, b) => a - b);

    const singleBase = base + 10_000_000;
    const single = await singlesRun(server, SINGLE_CLIENTS, SINGLES, singleBase);

    const alonePosts: number[] = [];
    const aloneHealth: number[] = [];
    for (let i = 0; i < ALONE; i++) {
      alonePosts.push(await postJson(server, event(i, singleBase + 20_000_000)));
      const started = performance.now();
      await (await fetch(`${server.url}/api/health`)).text();
      aloneHealth.push(performance.now() - started);
    }
    alonePosts.sort((a, b) => a - b);
    aloneHealth.sort((a, b) => a - b);

    const serverPeak = server.peakRssBytes();
    const rawRate = rows.length / (rawMs / 1000);
    const batchRate = rows.length / batchSeconds;
    return {
      batch: { events: rows.length, eventsPerSecond: Math.round(batchRate), p50Ms: +percentile(batchLatencies, 50).toFixed(1), p99Ms: +percentile(batchLatencies, 99).toFixed(1) },
      warmUp: { batches: WARM_UP_BATCHES, meanMs: +(warmUpMs / WARM_UP_BATCHES).toFixed(1) },
      raw: { rowsPerSecond: Math.round(rawRate) },
      ratio: +(batchRate / rawRate).toFixed(3),
      single: {
        requests: single.requests,
        clients: single.clients,
        requestsPerSecond: single.requestsPerSecond,
        p50Ms: single.p50Ms,
        p99Ms: single.p99Ms,
        clientCpuMsPerRequest: single.clientCpuMsPerRequest,
        serverCpuMsPerRequest: single.cpuMsPerRequest,
      },
      alone: { postP50Ms: +percentile(alonePosts, 50).toFixed(2), healthP50Ms: +percentile(aloneHealth, 50).toFixed(2) },
      serverPeakRssMiB: serverPeak === null ? null : Math.round(serverPeak / 2 ** 20),
    };
  } finally {
    await server.stop();
  }
}

/** Single-event POSTs from `clients` concurrent clients: latency, and the server main thread's CPU per request. */
export interface SinglesRun {
  clients: number;
  requests: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** The server's main thread (the ingest thread): CPU ms per request, null where /proc cannot tell. */
  cpuMsPerRequest: number | null;
  /** This process's CPU per request: the clients' own cost, on the cores the server runs on. */
  clientCpuMsPerRequest: number;
}

/**
 * How the clients share the events: `own`, each client its own threads, sent in order (as agents
 * report: one thread's events come from one agent, one after another); `shared`, the clients take
 * the next event of one sequence in turn, so one thread's events arrive from several clients at
 * once, out of order, and the server replays those threads (what a real fleet does not cause).
 */
export type SinglesOrder = "own" | "shared";

/** Apart enough that no two clients' events share a thread (the thread's id carries the base). */
const CLIENT_BASE_STEP = 1_000_000;

export async function singlesRun(server: RunningServer, clients: number, requests: number, base: number, order: SinglesOrder = "own", post = postJson): Promise<SinglesRun> {
  const latencies: number[] = [];
  let next = 0;
  const cpuBefore = server.mainThreadCpuMs();
  const clientCpuBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      if (order === "shared") {
        while (next < requests) latencies.push(await post(server, event(next++, base)));
        return;
      }
      const own = base + client * CLIENT_BASE_STEP;
      for (let i = 0; next < requests; i++, next++) latencies.push(await post(server, event(i, own)));
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = server.mainThreadCpuMs();
  const clientCpu = process.cpuUsage(clientCpuBefore);
  latencies.sort((a, b) => a - b);
  return {
    clients,
    requests,
    requestsPerSecond: Math.round(requests / seconds),
    p50Ms: +percentile(latencies, 50).toFixed(2),
    p99Ms: +percentile(latencies, 99).toFixed(2),
    cpuMsPerRequest: cpuBefore === null || cpuAfter === null ? null : +((cpuAfter - cpuBefore) / requests).toFixed(3),
    clientCpuMsPerRequest: +((clientCpu.user + clientCpu.system) / 1000 / requests).toFixed(3),
  };
}

/** One run of a rounds comparison: its line's label and how its clients post. */
interface SinglesPlan {
  label: string;
  clients: number;
  order: SinglesOrder;
  post?: typeof postJson;
}

/** `rounds` rounds of `plans` in alternation, on one server after a warm-up: a line per run. */
async function singlesRounds(rounds: number, requests: number, plans: readonly SinglesPlan[]): Promise<string[]> {
  const server = await startServer();
  try {
    const base = Date.now() - 86_400_000;
    await singlesRun(server, SINGLE_CLIENTS, 1_000, base - 10_000_000);
    const lines: string[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const [index, plan] of plans.entries()) {
        const run = await singlesRun(server, plan.clients, requests, base + (round * plans.length + index) * 10_000_000, plan.order, plan.post);
        lines.push(
          `${plan.label}: ${run.requestsPerSecond}/s p50 ${run.p50Ms} ms p99 ${run.p99Ms} ms, ` +
            `CPU per request: the server's main thread ${run.cpuMsPerRequest} ms, the clients ${run.clientCpuMsPerRequest} ms`,
        );
      }
    }
    return lines;
  } finally {
    await server.stop();
  }
}

/**
 * `--singles [rounds]`: only single-event POSTs, from 1 client and from 8 (each its own threads,
 * then sharing them out of order); for comparing two builds of the ingest path (run each build's
 * rounds in alternation: the server main thread's CPU per request is the figure least disturbed
 * by a busy machine).
 */
const benchSingles = (rounds: number) =>
  singlesRounds(rounds, 2_000, [
    { label: "singles, 1 client, its own threads in order", clients: 1, order: "own" },
    { label: `singles, ${SINGLE_CLIENTS} clients, each its own threads in order`, clients: SINGLE_CLIENTS, order: "own" },
    { label: `singles, ${SINGLE_CLIENTS} clients, sharing threads, out of order`, clients: SINGLE_CLIENTS, order: "shared" },
  ]);

/** `--clients [rounds]`: single-event POSTs from 8 clients through post-events.ts and through fetch, in alternation. */
const benchClients = (rounds: number) =>
  singlesRounds(rounds, 3_000, [
    { label: "node:http", clients: SINGLE_CLIENTS, order: "own", post: postJson },
    { label: "fetch", clients: SINGLE_CLIENTS, order: "own", post: postWithFetch },
  ]);

/**
 * `--usage [events] [chunk,chunk…]`: the start-up count of source usage (lib/server/usage.ts) on a database of
 * `events` stored events (1M by default), one unit of work after another as the server runs them,
 * for several chunk sizes in alternation (the tally is reset before each run): each unit's time is
 * how long it holds the ingest thread.
 */
async function benchUsage(events: number, chunks: number[], rounds: number): Promise<string[]> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-bench-usage-"));
  const file = path.join(dir, "radar.db");
  try {
    const seed = new Database(file);
    seed.pragma("journal_mode = WAL");
    migrate(seed);
    seed.prepare(`INSERT INTO "Source" (id, name, createdAt) VALUES ('s', 's', 0)`).run();
    const insert = seed.prepare(
      `INSERT INTO "Event" (sourceId, idempotencyKey, format, type, at, receivedAt, turnId, raw, normalized) VALUES ('s', ?, 'canonical', ?, ?, ?, ?, ?, ?)`,
    );
    const base = Date.now() - 86_400_000;
    seed.transaction(() => {
      for (let i = 0; i < events; i++) {
        const row = event(i, base);
        const json = JSON.stringify(row);
        insert.run(row.id, row.type, row.at, row.at, row.turnId, json, json);
      }
    })();
    seed.close();
    process.env.DATABASE_URL = `file:${file}`;
    const { countNewEvents } = await import("../lib/db/sources");
    const { db } = await import("../lib/db/client");
    const lines: string[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const chunk of chunks) {
        db().sql.exec(`DELETE FROM "SourceUsage"; UPDATE "UsageTally" SET countedThrough = 0`);
        const units: number[] = [];
        const started = performance.now();
        for (;;) {
          const unitStarted = performance.now();
          const more = await countNewEvents(chunk);
          units.push(performance.now() - unitStarted);
          if (!more) break;
          await new Promise((resolve) => setImmediate(resolve));
        }
        const total = performance.now() - started;
        const counted = db().sql.prepare(`SELECT events FROM "SourceUsage" WHERE sourceId = 's'`).pluck().get();
        units.sort((a, b) => a - b);
        lines.push(
          `usage count of ${events.toLocaleString("en")} events in chunks of ${chunk.toLocaleString("en")}: ${units.length} units, ${Math.round(total)} ms in all; per unit p50 ${percentile(units, 50).toFixed(2)} ms, max ${units[units.length - 1].toFixed(2)} ms (counted ${counted})`,
        );
      }
    }
    return lines;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function formatIngestBench(result: IngestBench): string {
  return [
    `ingest, batches of ${BATCH} over HTTP: ${result.batch.events.toLocaleString("en")} events at ${result.batch.eventsPerSecond.toLocaleString("en")} events/s (p50 ${result.batch.p50Ms} ms, p99 ${result.batch.p99Ms} ms per batch)`,
    `raw better-sqlite3 inserts of the same rows: ${result.raw.rowsPerSecond.toLocaleString("en")} rows/s → HTTP ingestion reaches ${(result.ratio * 100).toFixed(1)} % of raw (target ≥ 25 %)`,
    `  (after ${result.warmUp.batches} batches on each side, not counted, that took the server just started ${result.warmUp.meanMs} ms each on average)`,
    `ingest, single-event POSTs from ${result.single.clients} clients, each its own threads in order: ${result.single.requestsPerSecond.toLocaleString("en")} requests/s (p50 ${result.single.p50Ms} ms, p99 ${result.single.p99Ms} ms; target ≥ 1,000/s, p99 < 50 ms; CPU per request: the server's ingest thread ${result.single.serverCpuMsPerRequest ?? "unknown"} ms, the bench's clients ${result.single.clientCpuMsPerRequest} ms)`,
    `single-event POST from 1 client alone: p50 ${result.alone.postP50Ms} ms, of which a request's own cost is about a GET /api/health (answered by the listener too): p50 ${result.alone.healthP50Ms} ms`,
    `peak RSS of the server during ingestion: ${result.serverPeakRssMiB ?? "unknown"} MiB`,
  ].join("\n");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const singles = process.argv.indexOf("--singles");
  const usage = process.argv.indexOf("--usage");
  const clients = process.argv.indexOf("--clients");
  const rounds = (index: number) => {
    const n = Number(process.argv[index + 1] ?? 3);
    if (!(Number.isInteger(n) && n > 0)) fail("bench-ingest", `${process.argv[index]} takes a whole number of rounds above 0; got "${process.argv[index + 1]}"`);
    return n;
  };
  if (clients !== -1) benchClients(rounds(clients)).then((lines) => console.log(lines.join("\n")));
  else if (usage !== -1) {
    const chunks = (process.argv[usage + 2] ?? "10000,1000").split(",").map(Number);
    benchUsage(Number(process.argv[usage + 1] ?? 1_000_000), chunks, 3).then((lines) => console.log(lines.join("\n")));
  } else if (singles !== -1) benchSingles(rounds(singles)).then((lines) => console.log(lines.join("\n")));
  else benchIngest().then((result) => console.log(formatIngestBench(result)));
}
