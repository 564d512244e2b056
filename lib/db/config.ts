import fs from "node:fs";
import path from "node:path";
import { config, ConfigError, storeOf } from "../config";

/** A database setting the operator must fix (bad URL, unwritable folder): one clear line, never a stack. */
export class DatabaseConfigError extends ConfigError {
  override name = "DatabaseConfigError";
}

/**
 * Resolves a SQLite DATABASE_URL (`file:` + path, relative to the working directory) to an
 * absolute file path, and proves its folder exists and is writable before anything opens it.
 */
export function resolveDatabasePath(url = config().DATABASE_URL, cwd = process.cwd()): string {
  if (storeOf(url) === "postgres") {
    throw new DatabaseConfigError(`DATABASE_URL names the PostgreSQL database ${postgresAddress(url)}, not a SQLite file.`);
  }
  if (storeOf(url) !== "sqlite") {
    throw new DatabaseConfigError(
      `DATABASE_URL must be a SQLite file URL such as "file:./data/radar.db" or a PostgreSQL URL such as "postgres://user@host/radar"; got "${url}".`,
    );
  }
  const raw = url.slice("file:".length).replace(/^\/\/(?=\/)/, "").split("?")[0];
  if (!raw || raw.endsWith("/")) {
    throw new DatabaseConfigError(`DATABASE_URL "${url}" names no file; expected e.g. "file:./data/radar.db".`);
  }
  const file = path.resolve(cwd, raw);
  const dir = path.dirname(file);
  try {
    fs.mkdirSync(/*turbopackIgnore: true*/ dir, { recursive: true });
  } catch (error) {
    throw new DatabaseConfigError(`Cannot create the data folder ${dir} for DATABASE_URL "${url}": ${(error as Error).message}.`);
  }
  try {
    fs.accessSync(/*turbopackIgnore: true*/ dir, fs.constants.W_OK);
    if (fs.existsSync(/*turbopackIgnore: true*/ file)) fs.accessSync(/*turbopackIgnore: true*/ file, fs.constants.R_OK | fs.constants.W_OK);
  } catch {
    throw new DatabaseConfigError(`The database ${file} (DATABASE_URL "${url}") is not writable by this user: fix the folder's permissions or point DATABASE_URL elsewhere.`);
  }
  if (fs.existsSync(/*turbopackIgnore: true*/ file) && fs.statSync(/*turbopackIgnore: true*/ file).isDirectory()) {
    throw new DatabaseConfigError(`DATABASE_URL "${url}" points at a folder, not a file.`);
  }
  return file;
}

/**
 * Checks DATABASE_URL as far as that needs no connection: a SQLite file's folder (see
 * resolveDatabasePath), a PostgreSQL URL's shape. What the database itself says comes when the
 * store opens (open-store.ts).
 */
export function checkDatabaseUrl(url = config().DATABASE_URL, cwd = process.cwd()): void {
  if (storeOf(url) !== "postgres") {
    resolveDatabasePath(url, cwd);
    return;
  }
  postgresAddress(url);
}

/** `host:port/database` of a PostgreSQL URL: what a message may name (never the user's password). */
export function postgresAddress(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // The URL itself may hold a password: only its scheme is repeated.
    throw new DatabaseConfigError(`DATABASE_URL is not a valid PostgreSQL URL (expected postgres://user:password@host:5432/radar).`);
  }
  const host = parsed.hostname || new URLSearchParams(parsed.search).get("host") || "localhost";
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, "")) || decodeURIComponent(parsed.username) || "postgres";
  return `${host}:${parsed.port || "5432"}/${database}`;
}

/**
 * Why a PostgreSQL database could not be opened, as the one line the operator reads at start:
 * where (postgresAddress) and the reason in plain words, never the password or a stack.
 */
export function postgresProblem(url: string, error: unknown): DatabaseConfigError {
  const { code, message } = error as { code?: string; message?: string };
  const user = (() => {
    try {
      return decodeURIComponent(new URL(url).username) || "the default user";
    } catch {
      return "the user";
    }
  })();
  const reasons: Record<string, string> = {
    ECONNREFUSED: "nothing accepts connections there (is PostgreSQL running on that host and port?)",
    ENOTFOUND: "that host name is unknown",
    EAI_AGAIN: "that host name could not be looked up",
    ETIMEDOUT: "the connection timed out",
    EHOSTUNREACH: "that host cannot be reached",
    ENETUNREACH: "that network cannot be reached",
    ECONNRESET: "the server closed the connection",
    "28P01": `the password of ${user} was refused`,
    "28000": `the login of ${user} was refused (pg_hba.conf or an unknown role)`,
    "3D000": "that database does not exist (create it first: createdb, or CREATE DATABASE)",
    "42501": `${user} lacks a privilege the radar needs (it creates its tables on first start)`,
    "53300": "the server has too many connections",
    "57P03": "the server is starting up or shutting down",
  };
  // An unknown case: PostgreSQL's own words, without anything that may quote the URL.
  const reason = (code && reasons[code]) || (message ?? String(error)).split("\n")[0].replaceAll(url, "DATABASE_URL");
  return new DatabaseConfigError(`cannot open the PostgreSQL database ${safeAddress(url)}: ${reason}.`);
}

function safeAddress(url: string): string {
  try {
    return postgresAddress(url);
  } catch {
    return "named by DATABASE_URL";
  }
}
