import { spawn, spawnSync, type SpawnSyncOptions } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { aptInstall } from "./apt.mjs";
import { freePort } from "./port.mjs";

/**
 * A throwaway PostgreSQL for tests and benchmarks: a fresh cluster in a temporary folder on a free 127.0.0.1
 * port, one database in it, and a stop() that leaves nothing running or on disk. The cluster is
 * also stopped when this process exits or is signalled, and by a small sentinel process when this
 * one is killed outright (kill -9), so a crashed run never leaks a server.
 */
export interface TestPostgres {
  /** postgres://postgres@127.0.0.1:PORT/radar */
  url: string;
  stop(): void;
}

const DEBIAN_BIN = "/usr/lib/postgresql";

/** The newest PostgreSQL binaries Debian installed (15 here), installing the package when missing. */
export function postgresBinaries(): string {
  const find = () => {
    if (!fs.existsSync(DEBIAN_BIN)) return null;
    const versions = fs.readdirSync(DEBIAN_BIN).filter((v) => fs.existsSync(path.join(DEBIAN_BIN, v, "bin", "initdb")));
    versions.sort((a, b) => Number(b) - Number(a));
    return versions.length ? path.join(DEBIAN_BIN, versions[0], "bin") : null;
  };
  const found = find();
  if (found) return found;
  aptInstall("postgresql", "the PostgreSQL suites (about a minute)");
  const installed = find();
  if (!installed) throw new Error(`PostgreSQL is not installed (no ${DEBIAN_BIN}/*/bin/initdb) and apt-get could not install it`);
  return installed;
}

export async function startPostgres(database = "radar"): Promise<TestPostgres> {
  const bin = postgresBinaries();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-pg-"));
  const data = path.join(dir, "data");
  // initdb refuses to run as root: the cluster then belongs to Debian's `postgres` user.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) spawnChecked("chown", ["-R", "postgres", dir]);
  const as = (command: string, args: string[], options: SpawnSyncOptions = {}) =>
    asRoot ? spawnChecked("runuser", ["-u", "postgres", "--", path.join(bin, command), ...args], options) : spawnChecked(path.join(bin, command), args, options);
  let started = false;
  const stop = () => {
    if (started) {
      started = false;
      spawnSync(...command(asRoot, path.join(bin, "pg_ctl"), ["-D", data, "-m", "fast", "-w", "stop"]), { stdio: "ignore" });
    }
    fs.rmSync(dir, { recursive: true, force: true });
    process.off("exit", stop);
    for (const signal of SIGNALS) process.off(signal, onSignal);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    stop();
    // Die of the signal as without this handler, unless someone else (the test runner) handles it.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  };
  process.on("exit", stop);
  for (const signal of SIGNALS) process.once(signal, onSignal);
  try {
    // A test cluster trades durability for speed: nothing in it must survive a crash.
    as("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"]);
    let port = 0;
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
      const result = spawnSync(...command(asRoot, path.join(bin, "pg_ctl"), ["-D", data, "-l", path.join(dir, "server.log"), "-o", options, "-w", "start"]), { encoding: "utf8" });
      if (result.status === 0) break;
      // Another process may have taken the free port in between: try another, a few times.
      if (attempt === 3) throw new Error(`pg_ctl start failed: ${result.stderr || result.stdout}\n${readLog(dir)}`);
    }
    started = true;
    watchParent(asRoot, bin, data, dir);
    const admin = `postgres://postgres@127.0.0.1:${port}/postgres`;
    await createDatabase(admin, database);
    return { url: `postgres://postgres@127.0.0.1:${port}/${database}`, stop };
  } catch (error) {
    stop();
    throw error;
  }
}

/** A new, empty database in the same cluster as `url` (one per suite keeps suites independent). */
export async function freshDatabase(url: string, prefix = "t"): Promise<string> {
  const name = `${prefix}_${crypto.randomBytes(5).toString("hex")}`;
  const target = new URL(url);
  const admin = new URL(url);
  admin.pathname = "/postgres";
  await createDatabase(admin.toString(), name);
  target.pathname = `/${name}`;
  return target.toString();
}

async function createDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
}

const SIGNALS: NodeJS.Signals[] = ["SIGINT", "SIGTERM", "SIGHUP"];

function command(asRoot: boolean, file: string, args: string[]): [string, string[]] {
  return asRoot ? ["runuser", ["-u", "postgres", "--", file, ...args]] : [file, args];
}

function spawnChecked(file: string, args: string[], options: SpawnSyncOptions = {}) {
  const result = spawnSync(file, args, { encoding: "utf8", ...options });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`${path.basename(file)} ${args.join(" ")} exited with ${result.status}: ${result.stderr}`);
  return result;
}

function readLog(dir: string): string {
  try {
    return fs.readFileSync(path.join(dir, "server.log"), "utf8").slice(-2000);
  } catch {
    return "";
  }
}

/**
 * A detached shell that outlives a killed test process: once that process is gone, it stops the
 * cluster and removes its folder (a no-op when stop() already did).
 */
function watchParent(asRoot: boolean, bin: string, data: string, dir: string): void {
  const [file, args] = command(asRoot, path.join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "stop"]);
  const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
  const script = `while kill -0 ${process.pid} 2>/dev/null && [ -d ${quote(data)} ]; do sleep 1; done; [ -d ${quote(data)} ] && ${[file, ...args].map(quote).join(" ")} >/dev/null 2>&1; rm -rf ${quote(dir)}`;
  spawn("sh", ["-c", script], { detached: true, stdio: "ignore" }).unref();
}
