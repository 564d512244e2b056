import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, inject } from "vitest";
import { resetConfig } from "@/lib/config";
import { freshDatabase } from "../../scripts/lib/postgres";

/**
 * A lib/db contract test runs its cases once per store: `describe.each(STORES)`, then
 * `useStore(store)` first in the block. SQLite gets a temporary file, PostgreSQL a fresh, migrated
 * database in the run's cluster; DATABASE_URL names it while the block runs (lib/db/store.ts reads
 * it on every call), and everything is closed and removed after.
 */
export const STORES = ["sqlite", "postgres"] as const;
export type TestStore = (typeof STORES)[number];

export function useStore(store: TestStore): void {
  let dir = "";
  beforeAll(async () => {
    if (store === "sqlite") {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-contract-"));
      process.env.DATABASE_URL = `file:${path.join(dir, "radar.db")}`;
    } else {
      const url = await freshDatabase(inject("postgresUrl"), "contract");
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { migratePostgres } = await import("@/lib/db/postgres/migrate");
        await migratePostgres(client);
      } finally {
        await client.end();
      }
      process.env.DATABASE_URL = url;
    }
    resetConfig();
  });
  afterAll(async () => {
    if (store === "sqlite") {
      const { closeDatabase } = await import("@/lib/db/client");
      await closeDatabase();
      fs.rmSync(dir, { recursive: true, force: true });
    } else {
      const { closePool } = await import("@/lib/db/postgres/pool");
      const { closePostgresPrisma } = await import("@/lib/db/postgres/client");
      await Promise.all([closePool(), closePostgresPrisma()]);
    }
  });
}


export type Row = Record<string, unknown>;

/** A source row for a contract test's lines, written with plain SQL on the store under test. */
export async function insertSource(store: TestStore, source: { id: string; name: string }, createdAt: number): Promise<void> {
  await exec(
    store,
    `INSERT INTO "Source" (id, name, createdAt, capacityRecovery) VALUES (?, ?, ?, 0)`,
    (ms) => `INSERT INTO "Source" (id, name, "createdAt") VALUES ($1, $2, ${ms("$3")})`,
    [source.id, source.name, createdAt],
  );
}

/** One statement on the store under test, written once per dialect: `?` on SQLite, `$n` on PostgreSQL (`ms` turns epoch ms into a timestamp there). */
export async function exec(store: TestStore, sqlite: string, postgres: (ms: (n: string) => string) => string, params: unknown[]): Promise<void> {
  if (store === "sqlite") {
    const { db } = await import("@/lib/db/client");
    db().sql.prepare(sqlite).run(...params);
  } else {
    const { pool } = await import("@/lib/db/postgres/pool");
    const { timestampFromMs } = await import("@/lib/db/postgres/time");
    await pool().query(postgres(timestampFromMs), params);
  }
}

/** Plain SQL on the store under test: SQLite's connection, or PostgreSQL's pool with times as ms and booleans as 0/1. */
export async function tableRows(store: TestStore, table: string): Promise<Row[]> {
  if (store === "sqlite") {
    const { db } = await import("@/lib/db/client");
    return db().sql.prepare(`SELECT * FROM "${table}"`).all() as Row[];
  }
  const { pool } = await import("@/lib/db/postgres/pool");
  const { msFromTimestamp } = await import("@/lib/db/postgres/time");
  const { rows: columns } = await pool().query<{ name: string; type: string }>(
    `SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`,
    [table],
  );
  const select = columns.map(({ name, type }) =>
    type.startsWith("timestamp") ? `${msFromTimestamp(`"${name}"`)} AS "${name}"` : type === "boolean" ? `"${name}"::int AS "${name}"` : `"${name}"`,
  );
  return (await pool().query<Row>(`SELECT ${select.join(", ")} FROM "${table}"`)).rows;
}
