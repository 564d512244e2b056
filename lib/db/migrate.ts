import fs from "node:fs";
import path from "node:path";
import type Database from "better-sqlite3";

/**
 * Applies the committed SQL in prisma/migrations (Prisma's own layout) without Prisma's
 * schema engine, which cannot run on offline machines. Each migration runs once, inside a
 * transaction, and is recorded with its checksum; an edited migration is refused loudly.
 */
const MIGRATIONS_TABLE = "_radar_migrations";

export interface MigrationResult {
  applied: string[];
  total: number;
}

export function migrationsDir(cwd = process.cwd()): string {
  return path.join(cwd, "prisma", "migrations");
}

export function migrate(db: Database.Database, dir = migrationsDir()): MigrationResult {
  db.exec(`CREATE TABLE IF NOT EXISTS "${MIGRATIONS_TABLE}" (
    "name" TEXT NOT NULL PRIMARY KEY, "checksum" TEXT NOT NULL, "appliedAt" INTEGER NOT NULL)`);
  const names = fs
    .readdirSync(/*turbopackIgnore: true*/ dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && fs.existsSync(/*turbopackIgnore: true*/ path.join(dir, entry.name, "migration.sql")))
    .map((entry) => entry.name)
    .sort();
  const done = new Map(
    (db.prepare(`SELECT name, checksum FROM "${MIGRATIONS_TABLE}"`).all() as { name: string; checksum: string }[]).map(
      (row) => [row.name, row.checksum],
    ),
  );
  const record = db.prepare(`INSERT INTO "${MIGRATIONS_TABLE}" (name, checksum, appliedAt) VALUES (?, ?, ?)`);
  const applied: string[] = [];
  for (const name of names) {
    const sql = fs.readFileSync(/*turbopackIgnore: true*/ path.join(dir, name, "migration.sql"), "utf8");
    const sum = checksum(sql);
    const previous = done.get(name);
    if (previous !== undefined) {
      if (previous !== sum) throw new Error(`Migration ${name} was edited after it was applied; add a new migration instead.`);
      continue;
    }
    db.transaction(() => {
      db.exec(sql);
      record.run(name, sum, Date.now());
    })();
    applied.push(name);
  }
  return { applied, total: names.length };
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
