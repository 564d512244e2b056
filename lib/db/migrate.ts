import fs from "node:fs";
import path from "node:path";
import type Database from "better-sqlite3";

/**
 * Applies the committed SQL in prisma/migrations (Prisma's own layout) without Prisma's
 * schema engine, which cannot run on offline machines. Each migration runs once, inside a
 * transaction, and is recorded with its checksum; an edited migration is refused loudly.
 */
export const MIGRATIONS_TABLE = "_radar_migrations";

export interface MigrationResult {
  applied: string[];
  total: number;
}

export function migrationsDir(cwd = process.cwd()): string {
  return path.join(cwd, "prisma", "migrations");
}

/** One committed migration: its folder's name, its SQL and the checksum recorded when applied. */
export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

/** The migrations of a folder in the order they apply (by name). */
export function readMigrations(dir: string): Migration[] {
  return fs
    .readdirSync(/*turbopackIgnore: true*/ dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && fs.existsSync(/*turbopackIgnore: true*/ path.join(dir, entry.name, "migration.sql")))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const sql = fs.readFileSync(/*turbopackIgnore: true*/ path.join(dir, name, "migration.sql"), "utf8");
      return { name, sql, checksum: checksum(sql) };
    });
}

/** Whether `migration` still has to run given what was applied, refusing one edited since. */
export function isPending(migration: Migration, appliedChecksum: string | undefined): boolean {
  if (appliedChecksum === undefined) return true;
  if (appliedChecksum !== migration.checksum) throw new Error(`Migration ${migration.name} was edited after it was applied; add a new migration instead.`);
  return false;
}

export function migrate(db: Database.Database, dir = migrationsDir()): MigrationResult {
  db.exec(`CREATE TABLE IF NOT EXISTS "${MIGRATIONS_TABLE}" (
    "name" TEXT NOT NULL PRIMARY KEY, "checksum" TEXT NOT NULL, "appliedAt" INTEGER NOT NULL)`);
  const migrations = readMigrations(dir);
  const done = new Map(
    (db.prepare(`SELECT name, checksum FROM "${MIGRATIONS_TABLE}"`).all() as { name: string; checksum: string }[]).map(
      (row) => [row.name, row.checksum],
    ),
  );
  const record = db.prepare(`INSERT INTO "${MIGRATIONS_TABLE}" (name, checksum, appliedAt) VALUES (?, ?, ?)`);
  const applied: string[] = [];
  for (const migration of migrations) {
    if (!isPending(migration, done.get(migration.name))) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      record.run(migration.name, migration.checksum, Date.now());
    })();
    applied.push(migration.name);
  }
  return { applied, total: migrations.length };
}

/** FNV-1a over the SQL text: enough to notice an edited migration, no crypto needed. */
function checksum(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, "0");
}
