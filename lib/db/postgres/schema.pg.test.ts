import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freshDatabase } from "@/scripts/lib/postgres";
import { migrate, MIGRATIONS_TABLE, migrationsDir } from "../migrate";
import { postgresStructure, sqliteStructure, type StoreStructure } from "../store-structure";
import { openPostgresPrisma } from "./client";
import { migratePostgres, postgresMigrationsDir } from "./migrate";
import { msFromTimestamp, timestampFromMs, timestampText } from "./time";

/**
 * The store contract, against a real throwaway PostgreSQL: both stores migrate from empty to the
 * same tables, columns, nullability, keys and foreign keys (a SQLite migration without its
 * PostgreSQL twin fails here), and the PostgreSQL migrator is as strict and as safe as SQLite's.
 */
const clients: pg.Client[] = [];
let tmp: string;

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  clients.push(client);
  return client;
}

/** Columns compared by name: a column added later lands last on either store. */
const comparable = (structure: StoreStructure) =>
  Object.fromEntries(Object.entries(structure).map(([table, t]) => [table, { ...t, columns: [...t.columns].sort((a, b) => a.name.localeCompare(b.name)) }]));

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "radar-store-contract-"));
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.end()));
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe("the SQLite and PostgreSQL stores", () => {
  it("migrate from empty to the same structure", async () => {
    const sqlite = new Database(path.join(tmp, "radar.db"));
    const sqliteResult = migrate(sqlite);
    expect(sqliteResult.applied).toHaveLength(sqliteResult.total);
    const client = await connect(await freshDatabase(inject("postgresUrl")));
    const pgResult = await migratePostgres(client);
    expect(pgResult.applied).toHaveLength(pgResult.total);

    const lite = sqliteStructure(sqlite);
    sqlite.close();
    const postgres = await postgresStructure(client);
    expect(Object.keys(postgres)).toEqual(Object.keys(lite));
    expect(Object.keys(lite).length).toBeGreaterThan(30);
    expect(comparable(postgres)).toEqual(comparable(lite));
  });

  it("migrating twice is a no-op", async () => {
    const client = await connect(await freshDatabase(inject("postgresUrl")));
    await migratePostgres(client);
    const again = await migratePostgres(client);
    expect(again.applied).toEqual([]);
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM "${MIGRATIONS_TABLE}"`);
    expect(rows[0].n).toBe(again.total);
  });

  it("refuses a migration edited after it was applied", async () => {
    const dir = path.join(tmp, "edited");
    fs.cpSync(postgresMigrationsDir(), dir, { recursive: true });
    const client = await connect(await freshDatabase(inject("postgresUrl")));
    await migratePostgres(client, dir);
    const [first] = fs.readdirSync(dir).sort();
    fs.appendFileSync(path.join(dir, first, "migration.sql"), "\n-- edited\n");
    await expect(migratePostgres(client, dir)).rejects.toThrow(`Migration ${first} was edited after it was applied`);
  });

  it("applies each migration once when several instances migrate at the same moment", async () => {
    // A second migration beside the real ones, so there is more than one to race for.
    const dir = path.join(tmp, "concurrent");
    fs.cpSync(postgresMigrationsDir(), dir, { recursive: true });
    fs.mkdirSync(path.join(dir, "99999999999999_probe"));
    fs.writeFileSync(path.join(dir, "99999999999999_probe", "migration.sql"), `CREATE TABLE "Probe" ("id" INTEGER PRIMARY KEY);`);
    const url = await freshDatabase(inject("postgresUrl"));
    const instances = await Promise.all([1, 2, 3].map(() => connect(url)));
    const results = await Promise.all(instances.map((client) => migratePostgres(client, dir)));
    const applied = results.flatMap((result) => result.applied).sort();
    expect(applied).toEqual(fs.readdirSync(dir).sort());
    const { rows } = await instances[0].query(`SELECT count(*)::int AS n FROM "${MIGRATIONS_TABLE}"`);
    expect(rows[0].n).toBe(applied.length);
  });

  const searchIndexes = async (client: pg.Client) =>
    (await client.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE indexname = 'Thread_search_idx'`)).rows.map((row) => row.indexdef);

  it("builds the board's search index with pg_trgm, wherever the extension already lives", async () => {
    const plain = await connect(await freshDatabase(inject("postgresUrl")));
    await migratePostgres(plain);
    expect(await searchIndexes(plain)).toEqual([expect.stringContaining(") gin_trgm_ops)")]);

    const elsewhere = await connect(await freshDatabase(inject("postgresUrl")));
    await elsewhere.query("CREATE SCHEMA extensions; CREATE EXTENSION pg_trgm SCHEMA extensions");
    await migratePostgres(elsewhere);
    expect(await searchIndexes(elsewhere)).toEqual([expect.stringContaining("extensions.gin_trgm_ops")]);
  });

  it("migrates a role that may not create extensions, without the search index (a speed-up only)", async () => {
    const url = await freshDatabase(inject("postgresUrl"));
    const owner = await connect(url);
    // A role granted the schema but not CREATE on the database, as a DBA often sets one up.
    const role = `radar_schema_only_${Date.now()}`;
    await owner.query(`CREATE ROLE ${role} LOGIN; GRANT ALL ON SCHEMA public TO ${role}`);
    const limitedUrl = new URL(url);
    limitedUrl.username = role;
    const limited = await connect(limitedUrl.toString());
    const result = await migratePostgres(limited);
    expect(result.applied).toHaveLength(result.total);
    expect(await searchIndexes(limited)).toEqual([]);
    expect((await limited.query(`SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'pg_trgm'`)).rows[0].n).toBe(0);
  });

  it("has a PostgreSQL migration named no earlier than the newest SQLite one (its twin)", () => {
    // Catches a SQLite migration that changes data only, which the structure cannot show.
    const latest = (dir: string) => fs.readdirSync(dir).sort().at(-1) ?? "";
    expect(latest(postgresMigrationsDir()) >= latest(migrationsDir())).toBe(true);
  });
});

describe("the Prisma client on PostgreSQL (@prisma/adapter-pg)", () => {
  it("writes and reads a Source and a Thread, times exact to the millisecond", async () => {
    const url = await freshDatabase(inject("postgresUrl"));
    await migratePostgres(await connect(url));
    const prisma = openPostgresPrisma(url);
    try {
      const at = new Date("2026-11-29T17:00:00.123Z");
      await prisma.source.create({ data: { id: "s1", name: "codex@build-7", createdAt: at, capacityRecovery: true } });
      const thread = await prisma.thread.create({
        data: { sourceId: "s1", externalId: "th-1", status: "retrying", state: "{}", retryAttempt: 2, nextAttemptAt: at, createdAt: at, updatedAt: at },
      });
      expect(thread.id).toBeGreaterThan(0);
      const read = await prisma.thread.findUniqueOrThrow({ where: { sourceId_externalId: { sourceId: "s1", externalId: "th-1" } }, include: { source: true } });
      expect(read).toMatchObject({ status: "retrying", retryAttempt: 2, nextAttemptAt: at, nextAttemptEstimated: false, createdAt: at });
      expect(read.source).toMatchObject({ name: "codex@build-7", createdAt: at, capacityRecovery: true, lastSeenAt: null });
      const updated = await prisma.source.update({ where: { id: "s1" }, data: { lastSeenAt: new Date(at.getTime() + 1) } });
      expect(updated.lastSeenAt?.getTime()).toBe(at.getTime() + 1);
    } finally {
      await prisma.$disconnect();
    }
  });
});

describe("times on PostgreSQL", () => {
  it("epoch milliseconds survive TIMESTAMP(3) both ways, in SQL and as parameter text", async () => {
    const client = await connect(inject("postgresUrl"));
    // Whatever the session's time zone: TIMESTAMP without zone holds UTC wall time.
    await client.query("SET TIME ZONE 'America/New_York'");
    for (const ms of [0, -1, 1, 1_764_528_000_123, Date.UTC(2026, 10, 30, 23, 59, 59, 999), 253_402_300_799_999]) {
      const { rows } = await client.query(
        `SELECT ${msFromTimestamp(timestampFromMs("$1"))}::text AS viaSql, ${msFromTimestamp("$2::timestamp(3)")}::text AS viaText`,
        [ms, timestampText(ms)],
      );
      expect(rows[0], String(ms)).toEqual({ viasql: String(ms), viatext: String(ms) });
    }
  });
});
