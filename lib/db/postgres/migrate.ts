import path from "node:path";
import type pg from "pg";
import { isPending, MIGRATIONS_TABLE, readMigrations, type MigrationResult } from "../migrate";
import { withinTransaction } from "./pool";
import { DATABASE_LOCKS } from "./locks";

/**
 * Applies the committed SQL in prisma/postgres/migrations the way lib/db/migrate.ts applies
 * SQLite's: each migration once, in its own transaction, recorded with the same checksum in the
 * same table, an edited one refused. Instances that start together take turns on a transaction
 * advisory lock, so each migration runs exactly once however many migrate at the same moment.
 */
export function postgresMigrationsDir(cwd = process.cwd()): string {
  return path.join(cwd, "prisma", "postgres", "migrations");
}

const MIGRATION_LOCK = DATABASE_LOCKS.migration;

export async function migratePostgres(client: pg.ClientBase, dir = postgresMigrationsDir()): Promise<MigrationResult> {
  const migrations = readMigrations(dir);
  const applied: string[] = [];
  // The table is created under the lock too: two concurrent CREATE TABLE IF NOT EXISTS can collide.
  await locked(client, () =>
    client.query(`CREATE TABLE IF NOT EXISTS "${MIGRATIONS_TABLE}" (
      "name" TEXT NOT NULL PRIMARY KEY, "checksum" TEXT NOT NULL, "appliedAt" TIMESTAMP(3) NOT NULL)`),
  );
  for (const migration of migrations) {
    await locked(client, async () => {
      // Read again under the lock: another instance may have applied it a moment ago.
      const { rows } = await client.query<{ checksum: string }>(`SELECT checksum FROM "${MIGRATIONS_TABLE}" WHERE name = $1`, [migration.name]);
      if (!isPending(migration, rows[0]?.checksum)) return;
      await client.query(migration.sql);
      await client.query(`INSERT INTO "${MIGRATIONS_TABLE}" (name, checksum, "appliedAt") VALUES ($1, $2, now() AT TIME ZONE 'UTC')`, [
        migration.name,
        migration.checksum,
      ]);
      applied.push(migration.name);
    });
  }
  return { applied, total: migrations.length };
}

function locked<T>(client: pg.ClientBase, work: () => Promise<T>): Promise<T> {
  return withinTransaction(client, async () => {
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    return work();
  });
}
