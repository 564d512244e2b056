import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";
import { startPostgres, freshDatabase, type TestPostgres } from "./lib/postgres";
import { resetConfig } from "../lib/config";
import { parseExportQuery, parseInsightsQuery } from "../lib/insights/range";
import { migratePostgres } from "../lib/db/postgres/migrate";
import { copyTables } from "../lib/db/postgres/migrate-store";
import { timestampText } from "../lib/db/postgres/time";
import { formatBoardApiBench, timeBoardApi, type BoardApiBench } from "./bench-board";
import { event, postJson } from "./bench-ingest";
import { benchDatabase, INSIGHTS_VIEWS } from "./bench-insights";
import { startServer } from "./lib/server";
import { median, percentile } from "./lib/stats";
import { fail } from "./lib/cli";
import { prepare } from "./lib/prepare.mjs";

/**
 * `npm run bench -- --store postgres`: the same targets on PostgreSQL, in a throwaway cluster this
 * bench starts and stops (scripts/lib/postgres.ts). Batch ingestion over HTTP against the built
 * app on PostgreSQL, next to raw `pg` multi-row inserts of the same event rows; then the insights
 * bench's database (1,000,000 events over 10,000 threads, built on SQLite and moved by
 * migrate-store's copy) read by the insights views, the metrics snapshot, an export, and the
 * board API over HTTP. Needs a build.
 */
const BATCH = 500;
const BATCHES = 100;
const RUNS = 3;
type Row = ReturnType<typeof event>;

const COLUMNS = ["sourceId", "idempotencyKey", "format", "type", "at", "receivedAt", "turnId", "attempt", "httpStatus", "code", "message", "raw", "normalized"];

/** The same rows the fastest plain way `pg` allows: one multi-row INSERT per batch, in its own transaction. */
async function rawInserter(url: string): Promise<{ insert(rows: Row[]): Promise<number>; close(): Promise<void> }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await migratePostgres(client);
  await client.query(`INSERT INTO "Source" (id, name, "createdAt") VALUES ('s', 's', now())`);
  const text = (n: number) =>
    `INSERT INTO "Event" (${COLUMNS.map((c) => `"${c}"`).join(", ")}) VALUES ` +
    Array.from({ length: n }, (_, r) => `(${COLUMNS.map((__, c) => `$${r * COLUMNS.length + c + 1}`).join(", ")})`).join(", ");
  return {
    async insert(rows) {
      const started = performance.now();
      const values = rows.flatMap((row) => {
        const json = JSON.stringify(row);
        const error = (row as { error?: { httpStatus: number; code: string; message: string } }).error;
        const at = timestampText(row.at);
        return ["s", row.id, "canonical", row.type, at, at, row.turnId, (row as { attempt?: number }).attempt ?? null, error?.httpStatus ?? null, error?.code ?? null, error?.message ?? null, json, json];
      });
      await client.query("BEGIN");
      await client.query(text(rows.length), values);
      await client.query("COMMIT");
      return performance.now() - started;
    },
    close: () => client.end(),
  };
}

export interface PostgresIngestBench {
  batch: { events: number; eventsPerSecond: number; p50Ms: number; p99Ms: number };
  raw: { rowsPerSecond: number };
  ratio: number;
}

async function benchIngest(cluster: TestPostgres): Promise<PostgresIngestBench> {
  const server = await startServer({}, { databaseUrl: await freshDatabase(cluster.url, "bench_ingest") });
  const raw = await rawInserter(await freshDatabase(cluster.url, "bench_raw"));
  try {
    const base = Date.now() - 86_400_000;
    const rows = Array.from({ length: BATCH * BATCHES }, (_, i) => event(i, base));
    const latencies: number[] = [];
    let rawMs = 0;
    // Batch by batch, each over HTTP then raw: a busy neighbour slows both alike.
    for (let i = 0; i < rows.length; i += BATCH) {
      const batch = rows.slice(i, i + BATCH);
      latencies.push(await postJson(server, batch));
      rawMs += await raw.insert(batch);
    }
    const batchRate = rows.length / (latencies.reduce((sum, ms) => sum + ms, 0) / 1000);
    const rawRate = rows.length / (rawMs / 1000);
    latencies.sort((a, b) => a - b);
    return {
      batch: { events: rows.length, eventsPerSecond: Math.round(batchRate), p50Ms: +percentile(latencies, 50).toFixed(1), p99Ms: +percentile(latencies, 99).toFixed(1) },
      raw: { rowsPerSecond: Math.round(rawRate) },
      ratio: +(batchRate / rawRate).toFixed(3),
    };
  } finally {
    await Promise.all([server.stop(), raw.close()]);
  }
}

export interface PostgresReadsBench {
  events: number;
  moveSeconds: number;
  views: { view: string; ms: number }[];
  metricsMs: number;
  export: { rows: number; ms: number };
  boardApi: BoardApiBench;
}

/** The insights bench's SQLite database moved into PostgreSQL, then read in process (insights, metrics, export) and over HTTP (board). */
async function benchReads(cluster: TestPostgres): Promise<PostgresReadsBench> {
  const built = benchDatabase();
  const url = await freshDatabase(cluster.url, "bench_reads");
  const moveStarted = performance.now();
  const sqlite = new Database(built.file, { readonly: true });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await migratePostgres(client);
    await copyTables(sqlite, client);
    await client.query("ANALYZE");
  } finally {
    sqlite.close();
    await client.end();
  }
  const moveSeconds = (performance.now() - moveStarted) / 1000;

  process.env.DATABASE_URL = url;
  resetConfig();
  // As the server runs them on PostgreSQL (lib/server/off-thread.ts): in process, the database doing the work.
  const { READS } = await import("../lib/db/postgres/reads");
  const { exportPages } = await import("../lib/db/postgres/exports");
  const { closePool } = await import("../lib/db/postgres/pool");
  const { now } = built;
  const timedRuns = async (work: () => Promise<unknown>) => {
    const runs: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      await work();
      runs.push(performance.now() - started);
    }
    return +median(runs).toFixed(1);
  };
  try {
    const views: PostgresReadsBench["views"] = [];
    for (const view of INSIGHTS_VIEWS) {
      const parsed = parseInsightsQuery(new URLSearchParams(view), now);
      if (!parsed.ok) throw new Error(parsed.error);
      views.push({ view, ms: await timedRuns(() => READS.insights(parsed.query, now)) });
    }
    const metricsMs = await timedRuns(() => READS.metricsExposition(now, { watchdogLeader: true }, null));
    const exportQuery = parseExportQuery(new URLSearchParams("range=24h"), now);
    if (!exportQuery.ok) throw new Error(exportQuery.error);
    const exportStarted = performance.now();
    let rows = 0;
    for await (const page of exportPages("attempts", exportQuery.query, now)) rows += page.length;
    const exported = { rows, ms: +(performance.now() - exportStarted).toFixed(1) };

    const server = await startServer({}, { databaseUrl: url });
    try {
      const boardApi = { threads: 10_000, events: built.events, views: await timeBoardApi(server) };
      return { events: built.events, moveSeconds: +moveSeconds.toFixed(1), views, metricsMs, export: exported, boardApi };
    } finally {
      await server.stop();
    }
  } finally {
    await closePool();
  }
}

/** Each part's lines are printed as soon as it ends (`print`), so a later failure keeps them. */
export async function benchPostgres(print: (line: string) => void = console.log, parts: readonly ("ingest" | "reads")[] = ["ingest", "reads"]): Promise<void> {
  const cluster = await startPostgres();
  const n = (value: number) => value.toLocaleString("en");
  try {
    if (parts.includes("ingest")) await printIngest();
    if (parts.includes("reads")) await printReads();
  } finally {
    cluster.stop();
  }

  async function printIngest() {
    const ingest = await benchIngest(cluster);
    print(
      `PostgreSQL ingest, batches of ${BATCH} over HTTP: ${n(ingest.batch.events)} events at ${n(ingest.batch.eventsPerSecond)} events/s (p50 ${ingest.batch.p50Ms} ms, p99 ${ingest.batch.p99Ms} ms per batch)`,
    );
    print(`raw pg multi-row inserts of the same rows: ${n(ingest.raw.rowsPerSecond)} rows/s → HTTP ingestion reaches ${(ingest.ratio * 100).toFixed(1)} % of raw (target ≥ 25 %)`);
  }

  async function printReads() {
    const reads = await benchReads(cluster);
    print(`PostgreSQL reads at ${n(reads.events)} events (the insights bench's database, moved in ${reads.moveSeconds} s):`);
    for (const v of reads.views) print(`  insights ?${v.view}: ${v.ms} ms`);
    print(`  metrics scrape, read and rendered (all time, every metric): ${reads.metricsMs} ms (target < 50 ms)`);
    print(`  export attempts ?range=24h: ${n(reads.export.rows)} rows in ${reads.export.ms} ms`);
    print(formatBoardApiBench(reads.boardApi).replace(/^board API/, "PostgreSQL board API"));
  }
}

/**
 * `npx tsx scripts/bench-postgres.ts ingest` (or `reads`): one part alone, after the same build
 * check `npm run bench` makes; to compare a change of the write path or the reads in minutes.
 */
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const part = process.argv[2];
  if (part !== "ingest" && part !== "reads") fail("bench-postgres", `name a part: ingest or reads; got "${part ?? ""}" (npm run bench -- --store postgres runs both)`);
  prepare();
  await benchPostgres(console.log, [part]);
  process.exit(0);
}
