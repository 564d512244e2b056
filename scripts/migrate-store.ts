// `npm run migrate-store -- --from file:./data/radar.db --to postgres://user@host/radar`: moves a
// SQLite radar's data into an empty PostgreSQL database (lib/db/postgres/migrate-store.ts), all
// or nothing, and prints what it copied per table. Stop the radar first so nothing arrives after.
import { parseArgs } from "node:util";
import { ConfigError } from "../lib/config";
import { fail as failWith } from "./lib/cli";
import { migrateStore, MigrateStoreError } from "../lib/db/postgres/migrate-store";

const USAGE = "usage: npm run migrate-store -- --from file:./data/radar.db --to postgres://user@host/radar";

function fail(message: string): never {
  return failWith("migrate-store", message);
}

let values: { from?: string; to?: string };
try {
  ({ values } = parseArgs({ options: { from: { type: "string" }, to: { type: "string" } } }));
} catch (error) {
  fail(`${(error as Error).message}\n${USAGE}`);
}
if (!values.from || !values.to) fail(USAGE);

const started = Date.now();
try {
  let header = `${"table".padEnd(20)} ${"rows".padStart(15)}  ${"time".padStart(9)}\n`;
  const log = (line: string) => {
    process.stdout.write(`${header}${line}\n`);
    header = "";
  };
  const copies = await migrateStore({ from: values.from, to: values.to, log });
  const rows = copies.reduce((sum, copy) => sum + copy.rows, 0);
  process.stdout.write(`moved ${rows} rows in ${copies.length} tables in ${((Date.now() - started) / 1000).toFixed(1)} s; every table's row count verified\n`);
} catch (error) {
  if (error instanceof MigrateStoreError || error instanceof ConfigError) fail(error.message);
  fail(`${(error as Error).message}; nothing was copied`);
}
