import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { exportPages } from "../lib/db/exports";
import { insights } from "../lib/db/insights";
import { metricsSnapshot } from "../lib/db/metrics";
import { migrate } from "../lib/db/migrate";
import { rebuildRollups } from "../lib/db/rollups";
import { parseExportQuery, parseInsightsQuery } from "../lib/insights/range";
import { median } from "./lib/stats";
import { syncToDisk } from "./lib/disk";

/**
 * Insights query time on 1,000,000 events over 10,000 threads spread over the last 7 days
 * (300k retry notices, 200k episodes, 300k attempts), written with raw prepared statements in
 * transactions into a temporary migrated SQLite file. Each view is timed as the insights page
 * runs it (every chart's query), median of a few runs, with the time of each SQL statement.
 */
const THREADS = 10_000;
const TURNS = 10;
/** Per turn: started, 429 notice, attempt, 429 notice, attempt, 2 progress, capacity notice, progress, end. */
const EVENTS_PER_TURN = 10;
const DAY = 86_400_000;
const RUNS = 3;
/** The insights page's views the bench times, on either store. */
export const INSIGHTS_VIEWS = ["range=1h", "range=24h", "range=7d", "range=24h&split=model", "range=7d&provider=anthropic&kind=capacity", "range=24h&q=thread-99"];

const PROVIDERS = [
  ["openai", ["gpt-5", "gpt-5-mini", "gpt-4.1"]],
  ["anthropic", ["claude-opus", "claude-sonnet", "claude-haiku"]],
  ["google", ["gemini-pro", "gemini-flash", "gemini-lite"]],
  ["azure", ["gpt-5", "gpt-5-mini", "o4"]],
] as const;
const AGENTS = ["codex", "claude", "copilot"] as const;

/** Deterministic pseudo-random in [0, 1) so every run builds the same database. */
function random(seed: number): number {
  const x = Math.sin(seed * 12.9898) * 43758.5453;
  return x - Math.floor(x);
}

interface Built {
  file: string;
  dir: string;
  events: number;
  notices: number;
  episodes: number;
  attempts: number;
  seconds: number;
  rebuildSeconds: number;
  now: number;
}

/** The benchmark database, in a temporary folder the caller removes. */
function buildBenchDatabase(now: number): Built {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-bench-insights-"));
  const file = path.join(dir, "radar.db");
  const sql = new Database(file);
  sql.pragma("journal_mode = WAL");
  sql.pragma("synchronous = OFF");
  migrate(sql);
  const started = performance.now();
  const from = now - 7 * DAY;
  // Turns interleave evenly over the 7 days (each thread's in order), so every hour holds 1/168 of the data.
  const turnStart = (t: number, turn: number) => from + Math.floor(((turn * THREADS + t) / (THREADS * TURNS)) * (7 * DAY - 120_000));

  const insertSource = sql.prepare(`INSERT INTO "Source" (id, name, createdAt) VALUES (?, ?, ?)`);
  const insertThread = sql.prepare(
    `INSERT INTO "Thread" (id, sourceId, externalId, title, agent, provider, model, status, lastErrorKind, state, createdAt, updatedAt, lastEventAt)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '{}', ?, ?, ?)`,
  );
  const insertEvent = sql.prepare(
    `INSERT INTO "Event" (sourceId, threadId, idempotencyKey, format, type, at, receivedAt, turnId, attempt, delayMs, kind, httpStatus, code, message, raw, normalized)
     VALUES (?, ?, ?, 'canonical', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertEpisode = sql.prepare(
    `INSERT INTO "Episode" (threadId, seq, turnId, kind, policy, maxAttempts, startedAt, endedAt, outcome) VALUES (?, ?, ?, ?, ?, 5, ?, ?, ?)`,
  );
  const insertAttempt = sql.prepare(
    `INSERT INTO "Attempt" (episodeId, n, noticeAt, advisedDelayMs, expectedAt, startedAt, earlyByMs, httpStatus, code) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );

  for (const [i, agent] of AGENTS.entries()) insertSource.run(`src-${i}`, `${agent}@bench`, from);
  let events = 0;
  let notices = 0;
  let episodes = 0;
  let attempts = 0;
  for (let t = 0; t < THREADS; t++) {
    sql.transaction(() => {
      const [provider, models] = PROVIDERS[t % PROVIDERS.length];
      const model = models[Math.floor(t / PROVIDERS.length) % models.length];
      const agentIndex = t % AGENTS.length;
      const sourceId = `src-${agentIndex}`;
      const threadKey = t + 1;
      const start = turnStart(t, 0);
      const end = turnStart(t, TURNS - 1) + 90_000;
      insertThread.run(threadKey, sourceId, `thread-${t}`, `bench thread ${t}`, AGENTS[agentIndex], provider, model, t % 7 === 0 ? "exhausted" : "completed", "capacity", start, end, end);
      let seq = 0;
      const event = (type: string, at: number, turnId: string, extra: { attempt?: number; delayMs?: number; kind?: string; httpStatus?: number; code?: string; message?: string } = {}) => {
        const raw = JSON.stringify({ type, threadId: `thread-${t}`, turnId, at, provider, model, ...extra });
        insertEvent.run(sourceId, threadKey, `e-${t}-${seq++}`, type, at, at, turnId, extra.attempt ?? null, extra.delayMs ?? null, extra.kind ?? null, extra.httpStatus ?? null, extra.code ?? null, extra.message ?? null, raw, raw);
        events++;
        if (type === "retry") notices++;
      };
      for (let turn = 0; turn < TURNS; turn++) {
        const turnId = `turn-${turn}`;
        const at = turnStart(t, turn);
        const r = random(t * TURNS + turn);
        event("turn.started", at, turnId);
        // A 429 episode: two notices advising 2 s, the first retry sometimes early; recovered by progress.
        const gap1 = 200 + Math.floor(r * 2_600);
        const ep1 = Number(insertEpisode.run(threadKey, 2 * turn + 1, turnId, "rate_limit", "codex-429-stall-bound", at + 1_000, at + 9_000, "recovered").lastInsertRowid);
        event("retry", at + 1_000, turnId, { attempt: 1, delayMs: 2_000, kind: "rate_limit", httpStatus: 429, code: "rate_limit_exceeded", message: "Please try again in 2s." });
        insertAttempt.run(ep1, 1, at + 1_000, 2_000, at + 3_000, at + 1_000 + gap1, gap1 < 2_000 ? 2_000 - gap1 : null, 429, "rate_limit_exceeded");
        event("attempt", at + 1_000 + gap1, turnId, { attempt: 1 });
        event("retry", at + 5_000, turnId, { attempt: 2, delayMs: 2_000, kind: "rate_limit", httpStatus: 429, code: "rate_limit_exceeded", message: "Please try again in 2s." });
        insertAttempt.run(ep1, 2, at + 5_000, 2_000, at + 7_000, at + 7_000, null, 429, "rate_limit_exceeded");
        event("attempt", at + 7_000, turnId, { attempt: 2 });
        event("progress", at + 9_000, turnId);
        event("progress", at + 20_000, turnId);
        // A capacity episode: 30 s advised; it ends with the turn, mostly completed.
        const outcome = r < 0.7 ? "completed" : r < 0.85 ? "exhausted" : r < 0.95 ? "failed" : "stopped";
        const ep2 = Number(insertEpisode.run(threadKey, 2 * turn + 2, turnId, "capacity", "codex-capacity", at + 30_000, at + 90_000, outcome).lastInsertRowid);
        event("retry", at + 30_000, turnId, { attempt: 1, delayMs: 30_000, kind: "capacity", httpStatus: 503, code: "server_is_overloaded", message: "Model at capacity" });
        insertAttempt.run(ep2, 1, at + 30_000, 30_000, at + 60_000, null, null, 503, "server_is_overloaded");
        event("progress", at + 60_000, turnId);
        event(outcome === "completed" ? "turn.completed" : "turn.failed", at + 90_000, turnId);
        episodes += 2;
        attempts += 3;
      }
    })();
  }
  // The rows above bypass the writers that keep rollups: rebuilt once, as after an import.
  const rebuildStarted = performance.now();
  sql.transaction(() => rebuildRollups(sql))();
  const rebuildSeconds = (performance.now() - rebuildStarted) / 1000;
  sql.exec("ANALYZE");
  sql.close();
  syncToDisk(file);
  return { file, dir, events, notices, episodes, attempts, seconds: (performance.now() - started) / 1000, rebuildSeconds, now };
}

let shared: Built | null = null;

/**
 * The benchmark database for every bench part of one process, built on first use (it takes
 * minutes) and removed when the process exits. A part that writes to it works on a copy.
 */
export function benchDatabase(): Built {
  if (!shared) {
    const built = buildBenchDatabase(Date.now());
    process.on("exit", () => fs.rmSync(built.dir, { recursive: true, force: true }));
    shared = built;
  }
  return shared;
}

/** Wraps a connection so every statement's run time is recorded with a short label. */
function timed(sql: Database.Database, log: { label: string; ms: number }[]): Database.Database {
  const label = (text: string) =>
    text.includes("per AS MATERIALIZED") ? "waits per thread"
    : text.includes('FROM "RollupHour"') ? "hour rollups"
    : text.includes('FROM "Rollup"') ? "minute rollups"
    : text.includes("e.type = 'retry'") ? "notices"
    : text.includes("ep.outcome AS series") ? "outcomes"
    : text.includes("ep.endedAt IS NULL OR") ? "open episodes"
    : text.includes("AS actualBin") ? "gap bins"
    : text.includes("json_each") ? "top thread details"
    : "other";
  return new Proxy(sql, {
    get(target, property, receiver) {
      if (property !== "prepare") return Reflect.get(target, property, receiver);
      return (text: string) => {
        const statement = target.prepare(text);
        const wrap = (method: "all" | "get") => (...args: unknown[]) => {
          const started = performance.now();
          try {
            return (statement[method] as (...a: unknown[]) => unknown)(...args);
          } finally {
            log.push({ label: label(text), ms: performance.now() - started });
          }
        };
        const wrapped = { all: wrap("all"), get: wrap("get"), pluck: () => (statement.pluck(), wrapped) };
        return wrapped;
      };
    },
  });
}


export interface InsightsBench {
  events: number;
  threads: number;
  notices: number;
  episodes: number;
  attempts: number;
  buildSeconds: number;
  rebuildSeconds: number;
  views: { view: string; ms: number; statements: { label: string; ms: number }[] }[];
  metricsMs: number;
  export: { rows: number; ms: number };
}

export async function benchInsights(): Promise<InsightsBench> {
  const built = benchDatabase();
  const { now } = built;
  const sql = new Database(built.file, { readonly: true });
  try {
    const views: InsightsBench["views"] = [];
    for (const view of INSIGHTS_VIEWS) {
      const parsed = parseInsightsQuery(new URLSearchParams(view), now);
      if (!parsed.ok) throw new Error(parsed.error);
      const runs: { total: number; log: { label: string; ms: number }[] }[] = [];
      for (let i = 0; i < RUNS; i++) {
        const log: { label: string; ms: number }[] = [];
        const started = performance.now();
        await insights(parsed.query, now, timed(sql, log));
        runs.push({ total: performance.now() - started, log });
      }
      const best = runs.find((run) => run.total === median(runs.map((r) => r.total)))!;
      views.push({ view, ms: +best.total.toFixed(1), statements: best.log.map((s) => ({ label: s.label, ms: +s.ms.toFixed(1) })) });
    }
    const metricsRuns: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now();
      await metricsSnapshot(now, sql);
      metricsRuns.push(performance.now() - started);
    }
    const exportQuery = parseExportQuery(new URLSearchParams("range=24h"), now);
    if (!exportQuery.ok) throw new Error(exportQuery.error);
    const exportStarted = performance.now();
    let rows = 0;
    for await (const page of exportPages("attempts", exportQuery.query, now, sql)) rows += page.length;
    return {
      events: built.events,
      threads: THREADS,
      notices: built.notices,
      episodes: built.episodes,
      attempts: built.attempts,
      buildSeconds: +built.seconds.toFixed(1),
      rebuildSeconds: +built.rebuildSeconds.toFixed(1),
      views,
      metricsMs: +median(metricsRuns).toFixed(1),
      export: { rows, ms: +(performance.now() - exportStarted).toFixed(1) },
    };
  } finally {
    sql.close();
  }
}

export function formatInsightsBench(result: InsightsBench): string {
  const n = (value: number) => value.toLocaleString("en");
  return [
    `insights: ${n(result.events)} events over ${n(result.threads)} threads (${n(result.notices)} retry notices, ${n(result.episodes)} episodes, ${n(result.attempts)} attempts) over 7 days, built in ${result.buildSeconds} s (rollups rebuilt in ${result.rebuildSeconds} s)`,
    ...result.views.map(
      (v) => `insights ?${v.view}: ${v.ms} ms (${v.statements.map((s) => `${s.label} ${s.ms}`).join(", ")})`,
    ),
    `metrics snapshot (all time, every metric): ${result.metricsMs} ms (target < 50 ms)`,
    `export attempts ?range=24h: ${n(result.export.rows)} rows in ${result.export.ms} ms`,
  ].join("\n");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  benchInsights().then((result) => console.log(formatInsightsBench(result)));
}
