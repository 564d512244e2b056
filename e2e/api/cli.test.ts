import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { newApiKey } from "../../lib/auth/api-keys";
import { e2eStore, freshE2eDatabase } from "../support/e2e-store";
import { queryDatabase, startServer, type RunningServer } from "../support/server";

/**
 * `npm run keys` and `npm run users` from a shell on the server's database file, against the
 * running server: what they make works at once, what they take away stops at once.
 */
const root = path.resolve(import.meta.dirname, "../..");
let server: RunningServer;

beforeAll(async () => {
  server = await startServer();
}, 180_000);
afterAll(() => server?.stop());

function npm(script: "keys" | "users", ...args: string[]): { stdout: string; stderr: string } {
  return npmOn(server.databaseUrl, new URL(server.url).port, script, ...args);
}

function npmOn(databaseUrl: string, port: string, script: "keys" | "users", ...args: string[]): { stdout: string; stderr: string } {
  const result = spawnSync("npm", ["run", "--silent", script, "--", ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: databaseUrl, HOST: "127.0.0.1", PORT: port },
    encoding: "utf8",
  });
  if (result.status !== 0) throw new Error(`npm run ${script} ${args.join(" ")}: exit ${result.status}\n${result.stdout}\n${result.stderr}`);
  return { stdout: result.stdout, stderr: result.stderr };
}

/**
 * A GET status. A shell command takes longer than the server keeps an idle connection open, so
 * pooled connections may be closed under the next request: it is sent again on another (each
 * closed one leaves the pool), never on a connection that got an answer.
 */
async function fetchOnOpenConnection(url: string, headers: Record<string, string> = {}, init: RequestInit = {}): Promise<Response> {
  for (let closed = 0; ; closed++) {
    try {
      return await fetch(url, { ...init, headers });
    } catch (error) {
      if ((error as { cause?: { code?: string } }).cause?.code !== "UND_ERR_SOCKET" || closed === 8) throw error;
    }
  }
}

async function status(pathname: string, headers: Record<string, string>): Promise<number> {
  return (await fetchOnOpenConnection(`${server.url}${pathname}`, headers)).status;
}

const lastLine = (text: string) => text.trimEnd().split("\n").at(-1)!;
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

it("a viewer key made in the shell reads threads and metrics, cannot stop, shows its last use, and is refused once revoked", { timeout: 180_000 }, async () => {
  const { stdout } = npm("keys", "create", "--role", "viewer", "--name", "scraper");
  const key = lastLine(stdout);
  expect(key).toMatch(/^rrk_[\w-]+$/);
  expect(await status("/api/v1/threads", bearer(key))).toBe(200);
  expect(await status("/api/metrics", bearer(key))).toBe(200);
  const stop = await fetchOnOpenConnection(`${server.url}/api/v1/threads/anything/stop`, { ...bearer(key), "content-type": "application/json" }, { method: "POST", body: "{}" });
  expect(stop.status).toBe(403);
  expect((await stop.json()).permission).toBe("operator");

  const listed = npm("keys", "list").stdout.split("\n").find((line) => line.includes("scraper"))!;
  expect(listed).toContain("viewer");
  expect(listed).toContain("service account");
  expect(listed).not.toMatch(/never/);

  expect(npm("keys", "revoke", "scraper").stdout).toContain('revoked 1 key(s) named "scraper"');
  expect(await status("/api/v1/threads", bearer(key))).toBe(401);
});

it("disabling a person in the shell ends their sessions and their keys at once", { timeout: 180_000 }, async () => {
  const email = "leaver@cli.test";
  const password = "leaver-password-1";
  expect(npm("users", "create", "--email", email, "--role", "operator", "--password", password).stdout).toContain(`created ${email} (operator)`);
  const session = await signInThroughTheForm(email, password);
  expect(await status("/api/v1/threads", { cookie: session })).toBe(200);

  // Their own key, as the People page stores it.
  const [{ id }] = await queryDatabase<{ id: string }>(server, `SELECT id FROM "User" WHERE email = ?`, [email]);
  const theirs = newApiKey("leaver's script", "operator", id);
  await server.addApiKey(theirs.row);
  expect(await status("/api/v1/threads", bearer(theirs.key))).toBe(200);

  expect(npm("users", "disable", email).stdout).toContain(`disabled ${email}`);
  expect(await status("/api/v1/threads", { cookie: session })).toBe(401);
  expect(await status("/api/v1/threads", bearer(theirs.key))).toBe(401);
});

it("`users setup-link` prints a link whose page offers the setup form", { timeout: 180_000 }, async () => {
  const link = lastLine(npm("users", "setup-link").stdout);
  expect(link).toMatch(new RegExp(`^${server.url.replace(/[.:/]/g, "\\$&")}/setup\\?code=[\\w-]+$`));
  const page = await (await fetchOnOpenConnection(link)).text();
  expect(page).toContain('data-testid="setup-email"');
  const wrong = await (await fetchOnOpenConnection(`${server.url}/setup?code=not-the-code`)).text();
  expect(wrong).not.toContain('data-testid="setup-email"');
});

it("`users --help`, `-h` and `help` print the usage with every command; an unknown command is a usage error (exit 2)", () => {
  for (const flag of ["--help", "-h", "help"]) {
    const result = spawnSync("npm", ["run", "--silent", "users", "--", flag], { cwd: root, env: { ...process.env, DATABASE_URL: server.databaseUrl }, encoding: "utf8" });
    expect(result.status, result.stderr).toBe(0);
    for (const command of ["create", "reset-password", "disable", "enable", "set-role", "unlock <email>", "unlock --address", "setup-link", "list"]) {
      expect(result.stdout).toContain(command);
    }
    expect(result.stderr).toBe("");
  }
  for (const wrong of [["frobnicate"], ["list", "--frob"]]) {
    const result = spawnSync("npm", ["run", "--silent", "users", "--", ...wrong], { cwd: root, env: { ...process.env, DATABASE_URL: server.databaseUrl }, encoding: "utf8" });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^users: .*\nusage: npm run users -- <command>/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  }
});

it("`users unlock` lifts a person's lockout and `unlock --address` an address's, at once", { timeout: 180_000 }, async () => {
  const email = "typist@cli.test";
  const password = "typist-password-1";
  npm("users", "create", "--email", email, "--role", "viewer", "--password", password);
  for (let i = 0; i < 10; i++) expect(await signInError(email, "not-the-password")).toMatch(i < 9 ? /Wrong email or password/ : /this account is locked/);
  expect(await signInError(email, password)).toMatch(/this account is locked/);
  expect(npm("users", "unlock", email).stdout).toContain(`unlocked ${email}`);
  expect(await signInError(email, password)).toBeNull();

  // Everyone behind one address mistyping once each: the address waits, then the shell clears it.
  for (let i = 0; i < 50; i++) await signInError(`someone${i}@cli.test`, "not-the-password");
  expect(await signInError(email, password)).toMatch(/from this address/);
  expect(npm("users", "unlock", "--address", "127.0.0.1").stdout).toContain("unlocked the address 127.0.0.1");
  expect(await signInError(email, password)).toBeNull();
  const audit = await queryDatabase<{ action: string; target: string }>(server, `SELECT action, target FROM "AuditEntry" WHERE action IN ('person.unlock', 'address.unlock') ORDER BY id`);
  expect(audit).toEqual([{ action: "person.unlock", target: email }, { action: "address.unlock", target: "127.0.0.1" }]);
});

it("a setup link stops working once an admin is created in the shell, and no new one is printed then", { timeout: 180_000 }, async () => {
  const link = lastLine(npm("users", "setup-link").stdout);
  expect(await (await fetchOnOpenConnection(link)).text()).toContain('data-testid="setup-email"');
  npm("users", "create", "--email", "boss@cli.test", "--role", "admin", "--password", "boss-password-12");
  expect(await (await fetchOnOpenConnection(link)).text()).not.toContain('data-testid="setup-email"');
  const again = spawnSync("npm", ["run", "--silent", "users", "--", "setup-link"], {
    cwd: root, env: { ...process.env, DATABASE_URL: server.databaseUrl, HOST: "127.0.0.1", PORT: new URL(server.url).port }, encoding: "utf8",
  });
  expect(again.status).toBe(1);
  expect(again.stderr).toContain("An admin exists already");
});

/** The sign-in form's error for these credentials, or null when they signed in. */
async function signInError(email: string, password: string): Promise<string | null> {
  try {
    await signInThroughTheForm(email, password);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/**
 * Signs in the way a browser without JavaScript does: the sign-in page's form posted with its
 * hidden action fields. Returns the session cookie.
 */
async function signInThroughTheForm(email: string, password: string): Promise<string> {
  const html = await (await fetchOnOpenConnection(`${server.url}/sign-in`)).text();
  const form = html.slice(html.indexOf('aria-label="Sign in with email and password"'));
  const body = new FormData();
  for (const match of form.slice(0, form.indexOf("</form>")).matchAll(/<input type="hidden" name="([^"]+)"(?: value="([^"]*)")?/g)) {
    body.append(decode(match[1]), decode(match[2] ?? ""));
  }
  body.set("email", email);
  body.set("password", password);
  const response = await fetch(`${server.url}/sign-in`, { method: "POST", body, redirect: "manual", headers: { origin: server.url } });
  const cookies = response.headers.getSetCookie().map((c) => c.split(";")[0]);
  const session = cookies.filter((c) => c.includes("session")).join("; ");
  // The page's answer (with the form's error) goes with the refusal, for the tests that read it.
  if (!session) throw new Error(`no session cookie: ${response.status} ${cookies.join(", ")}\n${await response.text()}`);
  return session;
}

const decode = (text: string) => text.replace(/&quot;/g, '"').replace(/&#x27;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

it("works on a database no server has started on yet: the command migrates it first, as a start does", { timeout: 180_000 }, async () => {
  const databaseUrl = e2eStore() === "postgres" ? await freshE2eDatabase() : `file:${path.join(fs.mkdtempSync(path.join(os.tmpdir(), "radar-cli-")), "radar.db")}`;
  expect(npmOn(databaseUrl, "3000", "keys", "list").stdout.trim()).toBe("(none)");
  expect(lastLine(npmOn(databaseUrl, "3000", "keys", "create", "--role", "viewer", "--name", "early").stdout)).toMatch(/^rrk_/);
  expect(npmOn(databaseUrl, "3000", "users", "list").stdout.trim()).toBe("(none)");
});
