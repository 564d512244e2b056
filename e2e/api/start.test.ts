import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { expect, it } from "vitest";
import { migrate } from "@/lib/db/migrate";
import { freePort } from "../../scripts/lib/port.mjs";
import { startServer } from "../support/server";

/** `npm start` itself: first start prints the token once, a warm restart redoes nothing, bad config fails fast. */
const root = path.resolve(import.meta.dirname, "../..");


/** Runs scripts/start.mjs until /api/health answers (or it exits); returns its output and how long that took. */
async function start(env: Record<string, string>): Promise<{ output: string; ms: number; code: number | null }> {
  const started = Date.now();
  const child = spawn(process.execPath, [path.join(root, "scripts/start.mjs")], { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (chunk) => (output += chunk));
  child.stderr.on("data", (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      if ((await fetch(`http://127.0.0.1:${env.PORT}/api/health`)).ok) break;
    } catch {
      // not yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const ms = Date.now() - started;
  if (child.exitCode === null) child.kill("SIGTERM");
  const code = await exited;
  return { output, ms, code };
}

it("first start prints the URL, a token and the one-time setup link once; a warm restart neither rebuilds nor prints them again", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-start-"));
  const env = { PORT: String(await freePort()), DATABASE_URL: `file:${path.join(dir, "radar.db")}`, RADAR_INGEST_TOKEN: "" };
  const first = await start(env);
  expect(first.output).toMatch(/Ingest token: rr_[A-Za-z0-9_-]{20,}/);
  expect(first.output).toContain(`Dashboard:    http://127.0.0.1:${env.PORT}`);
  expect(first.output).toMatch(new RegExp(`Open: http://127\\.0\\.0\\.1:${env.PORT}/setup\\?code=[\\w-]{20,}`));
  // What a rebuild or reinstall would rewrite, not how long the start took (that is the machine's).
  const artifacts = [".next/BUILD_ID", ".next/radar-build-hash", "node_modules/.radar/install", "node_modules/.radar/generate"].map((f) => path.join(root, f));
  const mtimes = () => artifacts.map((f) => (fs.existsSync(f) ? fs.statSync(f).mtimeMs : null));
  const before = mtimes();
  const second = await start(env);
  expect(second.output).not.toContain("Ingest token");
  expect(second.output).not.toContain("/setup?code=");
  expect(second.output).not.toMatch(/building the dashboard|installing dependencies|generating the Prisma client/);
  expect(mtimes()).toEqual(before);
});

it.each([
  ["a PostgreSQL server that cannot be reached", "postgres://radar:s3cret@db.example/radar", /\[radar\] cannot open the PostgreSQL database db\.example:5432\/radar: that host name is unknown\./],
  ["a DATABASE_URL of no known store", "mysql://db.example/radar", /\[radar\] configuration: DATABASE_URL: expected a SQLite file URL like file:\.\/data\/radar\.db or a PostgreSQL URL/],
  // A folder inside a regular file can never be created, even by root.
  ["a data folder that cannot be created", `file:${path.join(root, "package.json")}/data/radar.db`, /\[radar\] Cannot create the data folder/],
])("%s stops npm start at once with one clear line", async (_name, url, message) => {
  const result = await start({ PORT: String(await freePort()), DATABASE_URL: url });
  expect(result.code).toBe(1);
  expect(result.output).toMatch(message);
  expect(result.output).not.toMatch(/\n\s+at .+\(.+:\d+:\d+\)/);
});

it("a HOST beyond loopback needs RADAR_PUBLIC_URL: refused without it, served (with a loud warning for plain http) with it", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-start-"));
  const env = { HOST: "0.0.0.0", DATABASE_URL: `file:${path.join(dir, "radar.db")}`, RADAR_INGEST_TOKEN: "", RADAR_PUBLIC_URL: "" };
  const refused = await start({ ...env, PORT: String(await freePort()) });
  expect(refused.code).toBe(1);
  expect(refused.output).toMatch(/\[radar\] not serving: HOST=0\.0\.0\.0 .*RADAR_PUBLIC_URL must say/);
  expect(refused.output).not.toMatch(/\n\s+at .+\(.+:\d+:\d+\)/);

  const port = String(await freePort());
  const served = await start({ ...env, PORT: port, RADAR_PUBLIC_URL: `http://radar.test:${port}` });
  expect(served.output).toMatch(/WARNING: RADAR_PUBLIC_URL=http:\/\/radar\.test:\d+ is plain http/);
  expect(served.output).toContain(`Dashboard:    http://radar.test:${port}`);
  expect(served.output).toMatch(/Ready in/);
});

it("a start that cannot seed its database stops with one line, rather than serving every request an error", async () => {
  // A database the start migrates but cannot create its first source in.
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "radar-seed-refused-")), "radar.db");
  const database = new Database(file);
  migrate(database);
  database.exec(`CREATE TRIGGER refuse_sources BEFORE INSERT ON "Source" BEGIN SELECT RAISE(ABORT, 'no source may be created here'); END;`);
  database.close();
  const failure = await startServer({}, { databaseFile: file }).then(
    () => null,
    (error: Error) => error.message,
  );
  expect(failure).toMatch(/^server exited with 1:/);
  expect(failure).toMatch(/\[radar\] cannot start: no source may be created here\n/);
  expect(failure).not.toMatch(/\n\s+at .+\(.+:\d+:\d+\)/);
});
