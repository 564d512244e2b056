import type Database from "better-sqlite3";
import type pg from "pg";
import { MIGRATIONS_TABLE } from "./migrate";

/**
 * What a migrated database holds, read from the store's own catalogue in one shape for SQLite
 * and PostgreSQL: tables, columns (in order, with nullability), primary keys, unique and plain
 * indexes (a missing index is a drift too: the other store would read a whole table) and foreign keys. Indexes on
 * expressions are a store's own way to search (PostgreSQL's trigram index for the board's text
 * filter) and are left out. The store contract test compares the two (so neither schema drifts unnoticed),
 * and migrate-store copies tables in foreign-key order with it.
 */
export interface TableStructure {
  columns: { name: string; nullable: boolean }[];
  primaryKey: string[];
  /** Column lists of unique indexes other than the primary key, sorted. */
  unique: string[][];
  /** Column lists of the other indexes, sorted. */
  indexes: string[][];
  foreignKeys: { columns: string[]; table: string; references: string[]; onDelete: string }[];
}

export type StoreStructure = Record<string, TableStructure>;


const byKey = <T>(list: T[]) => [...list].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

export function sqliteStructure(db: Database.Database): StoreStructure {
  const tables = db
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> ? ORDER BY name`)
    .pluck()
    .all(MIGRATIONS_TABLE) as string[];
  const out: StoreStructure = {};
  for (const table of tables) {
    const info = db.prepare(`SELECT name, "notnull", pk FROM pragma_table_info(?) ORDER BY cid`).all(table) as { name: string; notnull: number; pk: number }[];
    const primaryKey = info.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk).map((c) => c.name);
    const indexes = db.prepare(`SELECT name, "unique", origin FROM pragma_index_list(?)`).all(table) as { name: string; unique: number; origin: string }[];
    const columnsOf = (name: string) => db.prepare(`SELECT name FROM pragma_index_info(?) ORDER BY seqno`).pluck().all(name) as string[];
    const unique = indexes.filter((index) => index.unique && index.origin !== "pk").map((index) => columnsOf(index.name));
    const plain = indexes.filter((index) => !index.unique).map((index) => columnsOf(index.name));
    const keys = db.prepare(`SELECT id, "table", "from", "to", on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq`).all(table) as {
      id: number;
      table: string;
      from: string;
      to: string;
      on_delete: string;
    }[];
    const foreignKeys = new Map<number, TableStructure["foreignKeys"][number]>();
    for (const key of keys) {
      const entry = foreignKeys.get(key.id) ?? { columns: [], table: key.table, references: [], onDelete: key.on_delete.toUpperCase() };
      entry.columns.push(key.from);
      entry.references.push(key.to);
      foreignKeys.set(key.id, entry);
    }
    out[table] = {
      // A primary key column is NOT NULL whatever SQLite's catalogue says (INTEGER PRIMARY KEY is the rowid).
      columns: info.map((c) => ({ name: c.name, nullable: c.notnull === 0 && c.pk === 0 })),
      primaryKey,
      unique: byKey(unique),
      indexes: byKey(plain),
      foreignKeys: byKey([...foreignKeys.values()]),
    };
  }
  return out;
}

export async function postgresStructure(client: pg.ClientBase, schema = "public"): Promise<StoreStructure> {
  const { rows: columns } = await client.query<{ table: string; name: string; nullable: string }>(
    `SELECT table_name AS table, column_name AS name, is_nullable AS nullable FROM information_schema.columns
     WHERE table_schema = $1 AND table_name <> $2 ORDER BY table_name, ordinal_position`,
    [schema, MIGRATIONS_TABLE],
  );
  const { rows: indexes } = await client.query<{ table: string; primary: boolean; unique: boolean; columns: string[] }>(
    `SELECT t.relname AS table, i.indisprimary AS primary, i.indisunique AS unique,
            array(SELECT a.attname FROM unnest(i.indkey) WITH ORDINALITY k(attnum, n)
                  JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS columns
     FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace s ON s.oid = t.relnamespace
     WHERE s.nspname = $1 AND i.indexprs IS NULL`,
    [schema],
  );
  const { rows: keys } = await client.query<{ table: string; columns: string[]; references_table: string; references: string[]; on_delete: string }>(
    `SELECT t.relname AS table, r.relname AS references_table,
            array(SELECT a.attname FROM unnest(c.conkey) WITH ORDINALITY k(attnum, n)
                  JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS columns,
            array(SELECT a.attname FROM unnest(c.confkey) WITH ORDINALITY k(attnum, n)
                  JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum ORDER BY k.n)::text[] AS references,
            CASE c.confdeltype WHEN 'a' THEN 'NO ACTION' WHEN 'r' THEN 'RESTRICT' WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL' ELSE 'SET DEFAULT' END AS on_delete
     FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid JOIN pg_class r ON r.oid = c.confrelid
     JOIN pg_namespace s ON s.oid = t.relnamespace WHERE s.nspname = $1 AND c.contype = 'f'`,
    [schema],
  );
  const out: StoreStructure = {};
  for (const column of columns) {
    out[column.table] ??= { columns: [], primaryKey: [], unique: [], indexes: [], foreignKeys: [] };
    out[column.table].columns.push({ name: column.name, nullable: column.nullable === "YES" });
  }
  for (const index of indexes) {
    const table = out[index.table];
    if (!table) continue;
    if (index.primary) table.primaryKey = index.columns;
    else if (index.unique) table.unique.push(index.columns);
    else table.indexes.push(index.columns);
  }
  for (const key of keys) {
    out[key.table]?.foreignKeys.push({ columns: key.columns, table: key.references_table, references: key.references, onDelete: key.on_delete });
  }
  for (const table of Object.values(out)) {
    table.unique = byKey(table.unique);
    table.indexes = byKey(table.indexes);
    table.foreignKeys = byKey(table.foreignKeys);
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/** Tables in an order where every table comes after the tables its foreign keys reference. */
export function foreignKeyOrder(structure: StoreStructure): string[] {
  const order: string[] = [];
  const visiting = new Set<string>();
  const visit = (table: string) => {
    if (order.includes(table) || visiting.has(table)) return;
    visiting.add(table);
    for (const key of structure[table].foreignKeys) if (key.table !== table && structure[key.table]) visit(key.table);
    order.push(table);
  };
  for (const table of Object.keys(structure).sort()) visit(table);
  return order;
}
