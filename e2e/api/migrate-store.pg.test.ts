import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { migratePostgres } from "@/lib/db/postgres/migrate";
import { parseCapture } from "@/lib/ingest";
import { loadOtlpCapture } from "@/lib/ingest/otlp-fixtures";
import { captureNames, fixturesDir, readCapture } from "@/lib/ingest/test-fixtures";
import { INCIDENT_SPAN_MS, incidentEvents } from "@/lib/insights/incident-fixture";
import { PATIENCE_MS } from "../support/patience";
import { postgresClients } from "../support/postgres-clients";
import { freshDatabase } from "../../scripts/lib/postgres";
import { waitFor } from "../support/relay-helpers";
import { get, post, startServer, threadDetail, type RunningServer } from "../support/server";

/**
 * `npm run migrate-store` as an operator runs it, end to end. A SQLite radar is fed through the
 * built server: the real clients' captures (native and OpenTelemetry), the known incident of
 * canonical events, a burst of notices that opens an incident, and an operator's stop that a
 * relay acknowledges. The server is stopped, the command moves the file into a fresh PostgreSQL
 * database, and the same app then serves each store side by side: every export (threads,
 * episodes, attempts, each thread's timeline; JSON and CSV), the incidents and the insights
 * numbers must be the same bytes on both.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const MINUTE = 60_000;
// Two days ago on a whole minute: the known incident and the burst lie in a past, settled range.
const T0 = Math.floor((Date.now() - 2 * 86_400_000) / MINUTE) * MINUTE;
const iso = (ms: number) => new Date(ms).toISOString();

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-move-"));
let sqlite: RunningServer;
let moved: RunningServer | null = null;
const clients = postgresClients();

/** `npm run --silent migrate-store -- …` (npm's own banner and error lines silenced, as a script would run it). */
function migrateStoreCommand(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("npm", ["run", "--silent", "migrate-store", "--", ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

async function ingest(server: RunningServer, pathname: string, body: unknown): Promise<void> {
  const response = await post(server, pathname, body);
  expect(response.status, `${pathname}: ${JSON.stringify(response.body)}`).toBe(200);
}

/** Every native capture the suites know, posted as `npm run import` would: each to its format's endpoint. */
async function sendCaptures(server: RunningServer): Promise<void> {
  const second = path.resolve(fixturesDir(), "../real-clients-2");
  const texts = [
    ...captureNames().map((name) => readCapture(name)),
    ...["claude-ratelimit-rejected", "codex-ratelimit-appserver-usage-limit"].map((name) => fs.readFileSync(path.join(second, `${name}.jsonl`), "utf8")),
  ];
  expect(texts.length).toBeGreaterThan(4);
  for (const text of texts) {
    const capture = parseCapture(text);
    await ingest(server, `/api/v1/ingest/${capture.format}`, capture.items);
  }
  for (const request of loadOtlpCapture("codex-otlp-exec-429-then-ok")) await ingest(server, request.path, request.body);
}

/** Three threads hit one wall within a minute (an incident opens), then all recover (it closes, by the events alone). */
function burst(at: number) {
  const wall = { turnId: "w1", agent: "codex", provider: "openai", model: "move-wall" };
  return ["wall-1", "wall-2", "wall-3"].flatMap((threadId, i) => [
    { ...wall, threadId, type: "turn.started", at: iso(at + i * 1000) },
    { ...wall, threadId, type: "retry", at: iso(at + 10_000 + i * 1000), attempt: 1, error: { httpStatus: 429, message: "Rate limit reached.", retryAfter: "5" } },
    { ...wall, threadId, type: "attempt", at: iso(at + 16_000 + i * 1000), attempt: 1 },
    { ...wall, threadId, type: "progress", at: iso(at + 20_000 + i * 1000) },
    { ...wall, threadId, type: "turn.completed", at: iso(at + 30_000 + i * 1000) },
  ]);
}

/** A relay that can interrupt; a thread retrying now; the operator stops it; the relay takes and acknowledges the directive. */
async function stopAcknowledged(server: RunningServer): Promise<void> {
  expect((await get(server, "/api/v1/directives?wait=0&can=interrupt,continue")).status).toBe(200);
  const now = Date.now();
  const thread = { threadId: "move-stop", turnId: "s1", agent: "codex", provider: "openai", model: "gpt-5", title: "stopped by an operator" };
  await ingest(server, "/api/v1/events", [
    { ...thread, type: "turn.started", at: iso(now - 2000) },
    { ...thread, type: "retry", at: iso(now - 1000), attempt: 1, maxAttempts: 5, error: { httpStatus: 429, retryAfter: "120" } },
  ]);
  const stop = await server.fetch("/api/v1/threads/move-stop/stop", { method: "POST", body: JSON.stringify({ reason: "moving the radar" }) });
  expect(stop.status, await stop.text()).toBe(202);
  const polled = await get(server, "/api/v1/directives?wait=5&can=interrupt,continue");
  const [directive] = polled.body.directives;
  expect(directive).toMatchObject({ kind: "interrupt", threadId: "move-stop" });
  expect((await post(server, `/api/v1/directives/${directive.id}/ack`, { result: "acknowledged" })).status).toBe(200);
  await ingest(server, "/api/v1/events", [{ ...thread, type: "turn.interrupted", at: iso(Date.now()) }]);
}

/** A read's answer without the moment it was read (every other byte must match). */
function withoutServerTime(text: string): string {
  const { serverTime: _, ...rest } = JSON.parse(text) as Record<string, unknown>;
  return JSON.stringify(rest);
}

/**
 * What each store's server answers, read the same way: path → body text. With the SQLite
 * server's API key on both: the moved database holds it too.
 */
async function answers(server: RunningServer): Promise<Map<string, string>> {
  const read = async (pathname: string) => {
    const response = await server.fetch(pathname, { headers: { authorization: `Bearer ${sqlite.apiKey}` } });
    const text = await response.text();
    expect(response.status, `${pathname}: ${text}`).toBe(200);
    return text;
  };
  const out = new Map<string, string>();
  for (const kind of ["threads", "episodes", "attempts"]) {
    for (const format of ["json", "csv", "ndjson"]) out.set(`/api/v1/exports/${kind}?format=${format}`, await read(`/api/v1/exports/${kind}?format=${format}`));
  }
  const threads = JSON.parse(out.get("/api/v1/exports/threads?format=json")!) as { threadId: string; sourceId: string }[];
  for (const { threadId, sourceId } of threads) {
    for (const format of ["json", "csv"]) {
      const pathname = `/api/v1/threads/${encodeURIComponent(threadId)}/export?source=${sourceId}&format=${format}`;
      out.set(pathname, await read(pathname));
    }
  }
  // A fixed range (the insights of a preset move with the clock), then each split and a filter.
  const range = `from=${iso(T0 - 7 * 86_400_000)}&to=${iso(RANGE_END)}`;
  for (const query of [range, `${range}&split=provider`, `${range}&split=model`, `${range}&provider=openai`, `from=${iso(T0)}&to=${iso(T0 + INCIDENT_SPAN_MS)}`]) {
    out.set(`/api/v1/insights?${query}`, withoutServerTime(await read(`/api/v1/insights?${query}`)));
  }
  out.set("/api/v1/incidents?state=closed", withoutServerTime(await read("/api/v1/incidents?state=closed")));
  return out;
}

let RANGE_END = 0;
let before: Map<string, string>;

beforeAll(async () => {
  // On SQLite whatever store the run's other servers use: this radar is the one to move.
  sqlite = await startServer({}, { databaseFile: path.join(dir, "radar.db") });
  await sendCaptures(sqlite);
  await ingest(sqlite, "/api/v1/events", incidentEvents(T0));
  await ingest(sqlite, "/api/v1/events", burst(T0 + 60 * MINUTE));
  await stopAcknowledged(sqlite);
  expect((await threadDetail(sqlite, "move-stop")).thread.status).toBe("stopped");
  // Settled: the watchdog has nothing left to do (no deadline has passed), and no incident is open.
  await waitFor(
    async () => {
      const threads = JSON.parse(await (await sqlite.fetch("/api/v1/exports/threads?format=json")).text()) as { deadlineAt: string | null }[];
      const open = (await get(sqlite, "/api/v1/incidents?state=open")).body.incidents as unknown[];
      return open.length === 0 && threads.every((t) => t.deadlineAt === null || Date.parse(t.deadlineAt) > Date.now());
    },
    PATIENCE_MS,
    () => sqlite.output(),
  );
  // In the past, so that open waits are cut at the range's end on every read, not at each read's now.
  RANGE_END = Math.floor(Date.now() / MINUTE) * MINUTE;
  before = await answers(sqlite);
  await sqlite.stop();
}, PATIENCE_MS);

afterAll(async () => {
  await Promise.all([sqlite?.stop(), moved?.stop()]);
  await clients.end();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("npm run migrate-store, end to end", () => {
  it("moves a radar with real data: every export, the incidents and the insights are the same on PostgreSQL", async () => {
    const url = await freshDatabase(inject("postgresUrl"), "moved");
    const run = await migrateStoreCommand(["--from", `file:${sqlite.databaseFile}`, "--to", url]);
    expect(run.stderr).toBe("");
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^Event\s+\d+ rows\s+\d+ ms$/m);
    expect(run.stdout).toMatch(/^moved \d+ rows in \d+ tables in [\d.]+ s; every table's row count verified$/m);

    // The same data in both, served side by side: the file again, and the moved database.
    [, moved] = await Promise.all([sqlite.restart(), startServer({}, { databaseUrl: url })]);
    const onSqlite = await answers(sqlite);
    const onPostgres = await answers(moved);
    // Nothing changed on SQLite across its restart (the comparison is of settled data).
    expect([...onSqlite.keys()]).toEqual([...before.keys()]);
    for (const [pathname, text] of before) expect(onSqlite.get(pathname), pathname).toBe(text);

    expect([...onPostgres.keys()]).toEqual([...onSqlite.keys()]);
    for (const [pathname, text] of onSqlite) expect(onPostgres.get(pathname), pathname).toBe(text);
    // The comparison covered real data: threads from every capture, the incident's episodes, the stop, the closed incident.
    const threads = JSON.parse(onSqlite.get("/api/v1/exports/threads?format=json")!) as { threadId: string; status: string }[];
    expect(threads.length).toBeGreaterThan(12);
    expect(threads.find((t) => t.threadId === "move-stop")?.status).toBe("stopped");
    expect((JSON.parse(onSqlite.get("/api/v1/exports/episodes?format=json")!) as unknown[]).length).toBeGreaterThan(8);
    expect(JSON.parse(onSqlite.get("/api/v1/incidents?state=closed")!).incidents.length).toBeGreaterThan(0);
    expect(JSON.parse(onSqlite.get(`/api/v1/insights?from=${iso(T0)}&to=${iso(T0 + INCIDENT_SPAN_MS)}`)!).totals.notices).toBe(7);
  });

  it("refuses, in one line and a failing exit code: a target that holds data, an unreachable server, a missing file, a wrong URL", async () => {
    const url = await freshDatabase(inject("postgresUrl"), "occupied");
    const client = await clients.connect(url);
    await migratePostgres(client);
    await client.query(`INSERT INTO "Setting" (key, value, "updatedAt") VALUES ('k', 'v', now())`);
    const cases = [
      [["--from", `file:${sqlite.databaseFile}`, "--to", url], /^migrate-store: the target database already holds data \([A-Za-z, ]+\): move into an empty database\n$/],
      [["--from", `file:${sqlite.databaseFile}`, "--to", "postgres://radar:secret@127.0.0.1:1/radar"], /^migrate-store: cannot connect to postgres:\/\/…@127\.0\.0\.1:1\/radar: [^\n]*ECONNREFUSED[^\n]*\n$/],
      [["--from", "file:/nonexistent/radar.db", "--to", url], /^migrate-store: cannot open \/nonexistent\/radar\.db: [^\n]+\n$/],
      [["--from", `file:${sqlite.databaseFile}`, "--to", "mysql://db/radar"], /^migrate-store: --to must be a PostgreSQL URL such as postgres:\/\/user@host\/radar; got "mysql:\/\/db\/radar"\n$/],
    ] as const;
    const runs = await Promise.all(cases.map(([args]) => migrateStoreCommand([...args])));
    for (const [i, [args, message]] of cases.entries()) {
      expect(runs[i].stderr, args.join(" ")).toMatch(message);
      expect(runs[i].status, args.join(" ")).not.toBe(0);
      expect(runs[i].stdout, args.join(" ")).toBe("");
    }
    // The password stays out of the message.
    expect(runs[1].stderr).not.toContain("secret");
  });
});
