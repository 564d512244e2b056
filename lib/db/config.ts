import fs from "node:fs";
import path from "node:path";
import { config, ConfigError, storeOf } from "../config";

/** A database setting the operator must fix (bad URL, unwritable folder): one clear line, never a stack. */
export class DatabaseConfigError extends ConfigError {
  override name = "DatabaseConfigError";
}

/**
 * Resolves DATABASE_URL (`file:` + path, relative to the working directory) to an absolute
 * file path, and proves its folder exists and is writable before anything opens it.
 */
export function resolveDatabasePath(url = config().DATABASE_URL, cwd = process.cwd()): string {
  if (storeOf(url) === "postgres") {
    // Refused before anything runs, so a server never half-runs on a store it cannot serve from.
    throw new DatabaseConfigError(
      `DATABASE_URL must be a SQLite file URL such as "file:./data/radar.db" to serve: PostgreSQL is not served yet ` +
        `(what works on it today: \`npm run migrate-store -- --from file:… --to postgres://…\`, which also applies its migrations; see the README).`,
    );
  }
  if (storeOf(url) !== "sqlite") {
    throw new DatabaseConfigError(
      `DATABASE_URL must be a SQLite file URL such as "file:./data/radar.db"; got "${url}".`,
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
