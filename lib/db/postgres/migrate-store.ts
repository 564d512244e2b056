import Database from "better-sqlite3";
import pg from "pg";
import { storeOf } from "../../config";
import { resolveDatabasePath } from "../config";
import { migrate } from "../migrate";
import { foreignKeyOrder, postgresStructure, sqliteStructure, type StoreStructure } from "../store-structure";
import { migratePostgres } from "./migrate";
import { withinTransaction } from "./pool";
import { timestampText } from "./time";

/**
 * Moves a SQLite radar's data into an empty PostgreSQL database (`npm run migrate-store`): both
 * are migrated to the latest schema, then every table is copied in foreign-key order with
 * multi-row inserts, all in one transaction on the target, so a failed copy leaves it empty.
 * Values are converted to the target's column types (epoch ms to TIMESTAMP(3) UTC, 0/1 to
 * booleans), sequences continue past the copied ids, and each table's row count is verified.
 */
export class MigrateStoreError extends Error {
  override name = "MigrateStoreError";
}

export interface TableCopy {
  table: string;
  rows: number;
  ms: number;
}

/** PostgreSQL refuses more than 65,535 parameters in one statement. */
const MAX_PARAMETERS = 65_535;
const MAX_ROWS_PER_INSERT = 1_000;

export async function migrateStore(options: { from: string; to: string; log?: (line: string) => void }): Promise<TableCopy[]> {
  if (storeOf(options.from) !== "sqlite") throw new MigrateStoreError(`--from must be a SQLite file URL such as file:./data/radar.db; got "${options.from}"`);
  if (storeOf(options.to) !== "postgres") throw new MigrateStoreError(`--to must be a PostgreSQL URL such as postgres://user@host/radar; got "${options.to}"`);
  const file = resolveDatabasePath(options.from);
  let sqlite: Database.Database;
  try {
    sqlite = new Database(file, { fileMustExist: true });
  } catch (error) {
    throw new MigrateStoreError(`cannot open ${file}: ${(error as Error).message}`);
  }
  const target = new pg.Client({ connectionString: options.to });
  try {
    await target.connect();
  } catch (error) {
    sqlite.close();
    throw new MigrateStoreError(`cannot connect to ${redact(options.to)}: ${(error as Error).message}`);
  }
  try {
    // An older radar is brought to the latest schema first, as its next start would.
    migrate(sqlite);
    await migratePostgres(target);
    return await copyTables(sqlite, target, options.log ?? (() => undefined));
  } finally {
    sqlite.close();
    await target.end();
  }
}

/** Copies every table of a migrated SQLite database into a migrated, empty PostgreSQL one. */
export async function copyTables(sqlite: Database.Database, target: pg.ClientBase, log: (line: string) => void = () => undefined): Promise<TableCopy[]> {
  const source = sqliteStructure(sqlite);
  const destination = await postgresStructure(target);
  assertSameColumns(source, destination);
  const types = await columnTypes(target);
  const order = foreignKeyOrder(source);

  const occupied: string[] = [];
  for (const table of order) {
    const { rows } = await target.query(`SELECT EXISTS (SELECT 1 FROM "${table}") AS occupied`);
    if (rows[0].occupied) occupied.push(table);
  }
  if (occupied.length) {
    throw new MigrateStoreError(`the target database already holds data (${occupied.join(", ")}): move into an empty database`);
  }

  const copies: TableCopy[] = [];
  // One read transaction on the source: a consistent snapshot even if a radar is still writing.
  sqlite.exec("BEGIN");
  try {
    await withinTransaction(target, async () => {
      for (const table of order) {
        const started = Date.now();
        const columns = source[table].columns.map((c) => c.name);
        const convert = columns.map((column) => converter(table, column, types.get(`${table}.${column}`)!));
        const perInsert = Math.min(MAX_ROWS_PER_INSERT, Math.floor(MAX_PARAMETERS / columns.length));
        const select = sqlite.prepare(`SELECT ${columns.map(quote).join(", ")} FROM ${quote(table)}`).raw(true).safeIntegers(true);
        let batch: unknown[][] = [];
        let rows = 0;
        const flush = async () => {
          if (!batch.length) return;
          const values = batch.map((_, r) => `(${columns.map((__, c) => `$${r * columns.length + c + 1}`).join(", ")})`);
          await target.query(`INSERT INTO ${quote(table)} (${columns.map(quote).join(", ")}) VALUES ${values.join(", ")}`, batch.flat());
          rows += batch.length;
          batch = [];
        };
        for (const row of select.iterate() as Iterable<unknown[]>) {
          batch.push(row.map((value, c) => convert[c](value)));
          if (batch.length === perInsert) await flush();
        }
        await flush();
        const expected = Number(sqlite.prepare(`SELECT count(*) FROM ${quote(table)}`).pluck().get());
        const { rows: counted } = await target.query(`SELECT count(*)::int AS n FROM ${quote(table)}`);
        if (rows !== expected || counted[0].n !== expected) {
          throw new MigrateStoreError(`${table}: ${expected} rows in the source, ${counted[0].n} copied; nothing was kept`);
        }
        await continueSequences(sqlite, target, table, types);
        const copy = { table, rows, ms: Date.now() - started };
        copies.push(copy);
        log(`${table.padEnd(20)} ${String(rows).padStart(10)} rows  ${String(copy.ms).padStart(6)} ms`);
      }
    });
  } finally {
    sqlite.exec("COMMIT");
  }
  return copies;
}

const quote = (name: string) => `"${name}"`;

/** The credentials stay out of messages. */
function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, "//…@");
}

/** `Table.column` → PostgreSQL data type, and which columns draw from a sequence. */
async function columnTypes(target: pg.ClientBase): Promise<Map<string, { type: string; serial: boolean }>> {
  const { rows } = await target.query<{ table: string; column: string; type: string; serial: boolean }>(
    `SELECT table_name AS table, column_name AS column, data_type AS type, coalesce(column_default LIKE 'nextval(%', false) AS serial
     FROM information_schema.columns WHERE table_schema = current_schema()`,
  );
  return new Map(rows.map((row) => [`${row.table}.${row.column}`, { type: row.type, serial: row.serial }]));
}

function assertSameColumns(source: StoreStructure, target: StoreStructure): void {
  const names = (structure: StoreStructure) =>
    Object.entries(structure).flatMap(([table, t]) => t.columns.map((c) => `${table}.${c.name}`)).sort();
  const a = names(source);
  const b = new Set(names(target));
  const missing = a.filter((name) => !b.has(name));
  const extra = [...b].filter((name) => !a.includes(name));
  if (missing.length || extra.length) {
    throw new MigrateStoreError(
      `the two schemas differ (${[...missing.map((n) => `only in SQLite: ${n}`), ...extra.map((n) => `only in PostgreSQL: ${n}`)].join("; ")}): ` +
        "run both from the same version of the radar",
    );
  }
}

const INT4 = { min: -(2 ** 31), max: 2 ** 31 - 1 };

/** How one SQLite value (integers read as BigInt, exactly) becomes the target column's value. */
function converter(table: string, column: string, target: { type: string }): (value: unknown) => unknown {
  const refuse = (value: unknown, why: string): never => {
    throw new MigrateStoreError(`${table}.${column}: ${why} (${String(value)})`);
  };
  switch (target.type) {
    case "timestamp without time zone":
      return (value) => {
        if (value === null) return null;
        if (typeof value === "bigint" || typeof value === "number") return timestampText(Number(value));
        if (typeof value === "string" && !Number.isNaN(Date.parse(value))) return timestampText(Date.parse(value));
        return refuse(value, "not a time");
      };
    case "boolean":
      return (value) => (value === null ? null : value === 1n || value === 1 || value === "true" ? true : value === 0n || value === 0 || value === "false" ? false : refuse(value, "not a boolean"));
    case "integer":
      return (value) => {
        if (value === null) return null;
        const n = Number(value);
        return Number.isInteger(n) && n >= INT4.min && n <= INT4.max ? n : refuse(value, "does not fit PostgreSQL's INTEGER");
      };
    case "bigint":
      return (value) => (value === null ? null : typeof value === "bigint" || Number.isInteger(value) ? String(value) : refuse(value, "not a whole number"));
    case "double precision":
      return (value) => (value === null ? null : typeof value === "bigint" || typeof value === "number" ? Number(value) : refuse(value, "not a number"));
    case "text":
      return (value) => (value === null ? null : typeof value === "string" ? value : typeof value === "bigint" || typeof value === "number" ? String(value) : refuse(value, "not text"));
    default:
      throw new MigrateStoreError(`${table}.${column}: no conversion to PostgreSQL's ${target.type}`);
  }
}

/**
 * Ids keep growing from where SQLite's did: past the largest copied id and past SQLite's own
 * AUTOINCREMENT counter, which remembers ids of rows since deleted (an id is never reused).
 */
async function continueSequences(sqlite: Database.Database, target: pg.ClientBase, table: string, types: Map<string, { serial: boolean }>): Promise<void> {
  for (const [key, { serial }] of types) {
    const [owner, column] = key.split(".");
    if (owner !== table || !serial) continue;
    const counter = sqlite.prepare(`SELECT seq FROM sqlite_sequence WHERE name = ?`).pluck().get(table) as number | undefined;
    await target.query(
      `SELECT setval(pg_get_serial_sequence($1, $2), greatest(coalesce(max(${quote(column)}), 0), $3::bigint, 1), greatest(coalesce(max(${quote(column)}), 0), $3::bigint) > 0) FROM ${quote(table)}`,
      [quote(table), column, counter ?? 0],
    );
  }
}
