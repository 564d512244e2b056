/**
 * The built app as a child process on its own port and database (a SQLite file, or a PostgreSQL
 * database given): integration suites and the benchmarks start it the same way.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { newApiKey } from "../../lib/auth/api-keys";
import type { NewApiKey } from "../../lib/db/records/api-keys";
import { LISTENER_BUNDLE } from "../../lib/server/listener/bundle.mjs";
import { insertApiKeyInto } from "../../lib/db/api-keys";
import { insertSourceInto } from "../../lib/db/sources";
import { insertApiKeyOn } from "../../lib/db/postgres/api-keys";
import { insertSourceOn } from "../../lib/db/postgres/sources";
import { withinTransaction } from "../../lib/db/postgres/pool";
import type { StoredToken } from "../../lib/db/records/sources";
import { generateToken, storedToken } from "../../lib/server/tokens";
import { freePort } from "./port.mjs";

/** How long the app may take to answer /api/health: only a bound for a hung start, never a speed target. */
const HEALTHY_WITHIN_MS = 120_000;

/**
 * Starts the built app (as `npm start` serves it) on a free 127.0.0.1 port with its own SQLite file, for
 * integration suites. The server is killed when the suite ends or the test process exits.
 */
export interface RunningServer {
  url: string;
  /** The first source's ingest token. */
  token: string;
  /** An admin API key (a service account), for every read and operator call. */
  apiKey: string;
  /** Another API key (`newApiKey`'s row), as the People page stores one. */
  addApiKey(row: NewApiKey): Promise<void>;
  /** Another source with its own ingest token, as the Sources page makes one. */
  addSource(name: string): Promise<{ id: string; token: string }>;
  /** fetch with the admin API key, unless `init` sends its own authorization. */
  fetch(input: string, init?: RequestInit): Promise<Response>;
  /** The DATABASE_URL it serves: `file:…` or `postgres://…`. */
  databaseUrl: string;
  /** Its SQLite file; on PostgreSQL there is none, and asking for it throws. */
  databaseFile: string;
  stop(): Promise<void>;
  /** Same database, new process: proves state survives a restart. */
  restart(): Promise<void>;
  /** kill -9: the process gets no chance to flush or close anything (restart() brings it back). */
  kill(): Promise<void>;
  output(): string;
  /** The server's peak resident memory so far (its process and theirs it started; Linux /proc), null where unknown. */
  peakRssBytes(): number | null;
  /** CPU time the server's main thread (the one that ingests) has used so far, in ms (Linux /proc), null where unknown. */
  mainThreadCpuMs(): number | null;
}

const root = path.resolve(import.meta.dirname, "..", "..");
const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of children) child.kill("SIGKILL");
});

/** How much of a failed server's log an error quotes: its start and its end. */
const QUOTED_LOG_CHARS = 4_000;

/**
 * A failed server's log as an error quotes it: the whole log goes to a file the message names,
 * the message keeps its start and end. A server that logs a stack on every request can write
 * megabytes while a start is awaited, and a test runner that maps each quoted stack frame to its
 * source spends minutes per megabyte.
 */
function logForError(log: string): string {
  if (log.length <= 2 * QUOTED_LOG_CHARS) return log;
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "radar-server-log-")), "server.log");
  fs.writeFileSync(file, log);
  const omitted = log.length - 2 * QUOTED_LOG_CHARS;
  return `${log.slice(0, QUOTED_LOG_CHARS)}\n… ${omitted} characters left out; the whole log is in ${file} …\n${log.slice(-QUOTED_LOG_CHARS)}`;
}

/**
 * `databaseFile`: serve an existing SQLite database (a benchmark's) instead of a fresh one;
 * `databaseUrl`: serve this PostgreSQL database (empty or the radar's; the server migrates it).
 */
export async function startServer(env: Record<string, string> = {}, options: { databaseFile?: string; databaseUrl?: string } = {}): Promise<RunningServer> {
  const databaseUrl = options.databaseUrl ?? `file:${options.databaseFile ?? path.join(fs.mkdtempSync(path.join(os.tmpdir(), "radar-it-")), "radar.db")}`;
  const databaseFile = databaseUrl.startsWith("file:") ? databaseUrl.slice("file:".length) : null;
  const token = `rr_it_${Math.random().toString(36).slice(2)}`;
  // A fixed PORT (e.g. registered with an OpenID Connect provider before the start) is kept on restart.
  const fixedPort = env.PORT ? Number(env.PORT) : null;
  let port = fixedPort ?? (await freePort());
  let child: ChildProcess;
  let log = "";

  const launch = async () => {
    // The server `npm start` runs: the ingestion listener in front of Next.
    child = spawn(process.execPath, [path.join(root, LISTENER_BUNDLE)], {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        RADAR_INGEST_TOKEN: token,
        HOST: "127.0.0.1",
        PORT: String(port),
        NEXT_TELEMETRY_DISABLED: "1",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.add(child);
    child.stdout!.on("data", (chunk) => (log += chunk));
    child.stderr!.on("data", (chunk) => (log += chunk));
    const url = `http://127.0.0.1:${port}`;
    // The built app is ready in well under a second on an idle machine; the bound only stops a hang.
    const deadline = Date.now() + HEALTHY_WITHIN_MS;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${logForError(log)}`);
      try {
        const response = await fetch(`${url}/api/health`);
        if (response.ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`server did not become healthy in ${HEALTHY_WITHIN_MS / 1000} s:\n${logForError(log)}`);
  };

  const ended = () => !child || child.exitCode !== null || child.signalCode !== null;

  const stop = async () => {
    if (ended()) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
    children.delete(child);
  };

  const kill = async () => {
    if (ended()) return;
    const gone = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await gone;
    children.delete(child);
  };

  await launch();
  const seeded = newApiKey("integration-tests", "admin", null);
  await seedInto(databaseUrl).apiKey(seeded.row, Date.now());
  const apiKey = seeded.key;
  const running: RunningServer = {
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    token,
    apiKey,
    addApiKey: (row) => seedInto(databaseUrl).apiKey(row, Date.now()),
    async addSource(name) {
      const sourceToken = generateToken();
      return { id: await seedInto(databaseUrl).source(name, storedToken(sourceToken, "initial"), Date.now()), token: sourceToken };
    },
    fetch: (input, init = {}) => {
      const headers = new Headers(init.headers);
      if (!headers.has("authorization")) headers.set("authorization", `Bearer ${apiKey}`);
      return fetch(input.startsWith("/") ? `http://127.0.0.1:${port}${input}` : input, { ...init, headers });
    },
    databaseUrl,
    databaseFile: databaseFile ?? "",
    stop,
    async restart() {
      await stop();
      port = fixedPort ?? (await freePort());
      await launch();
    },
    kill,
    output: () => log,
    peakRssBytes: () => (child.pid === undefined ? null : peakRss(child.pid)),
    mainThreadCpuMs: () => (child.pid === undefined ? null : threadCpuMs(child.pid, child.pid)),
  };
  if (databaseFile === null) {
    // Not enumerable, so a copy of the handle (`{ ...server, token }`) does not ask for it.
    Object.defineProperty(running, "databaseFile", {
      enumerable: false,
      get: () => {
        throw new Error(`this server runs on PostgreSQL (${new URL(databaseUrl).pathname.slice(1)}): it has no database file`);
      },
    });
  }
  return running;
}

/**
 * Rows seeded straight into the database the server has just migrated: the same rows `npm run
 * keys -- create` and the Sources page write, without a second process per server.
 */
function seedInto(databaseUrl: string) {
  const onSqlite = <T>(write: (file: Database.Database) => T): T => {
    const file = new Database(databaseUrl.slice("file:".length), { timeout: 5_000 });
    try {
      return write(file);
    } finally {
      file.close();
    }
  };
  const onPostgres = async <T>(write: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      return await withinTransaction(client, () => write(client));
    } finally {
      await client.end();
    }
  };
  const sqlite = databaseUrl.startsWith("file:");
  return {
    apiKey: async (row: NewApiKey, now: number): Promise<void> =>
      sqlite ? onSqlite((file) => insertApiKeyInto(file, row, now)) : onPostgres((client) => insertApiKeyOn(client, row, now)),
    source: async (name: string, token: StoredToken, now: number): Promise<string> =>
      sqlite ? onSqlite((file) => insertSourceInto(file, name, token, now)) : onPostgres((client) => insertSourceOn(client, name, token, now)),
  };
}

/** A thread's time on a CPU (schedstat's first field, in ns) in ms; null when /proc cannot tell. */
function threadCpuMs(pid: number, tid: number): number | null {
  try {
    return Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
  } catch {
    return null;
  }
}

/** VmHWM of a process and its descendants, summed; null when /proc cannot tell. */
function peakRss(pid: number): number | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? NaN);
    if (!Number.isFinite(kib)) return null;
    const children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
    return kib * 1024 + children.reduce((sum, child) => sum + (peakRss(child) ?? 0), 0);
  } catch {
    return null;
  }
}
