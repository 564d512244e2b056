import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, expect, inject } from "vitest";
import { resetConfig } from "@/lib/config";
import type { TestStore } from "./both-stores";
import { PATIENCE_MS } from "./patience";
import { freshDatabase } from "./postgres";

/**
 * A read module's contract test on the same data in both stores: one SQLite radar is built once
 * per test file (the insights fixture, then the real clients' captures through the pipeline, as
 * a radar with real data), and each store's block reads a copy of it — a copy of the file on
 * SQLite, the rows moved by migrate-store on PostgreSQL. `sameAnswer` records what SQLite
 * answered and requires PostgreSQL to answer the same.
 */
export const BUILT_AT = Date.UTC(2026, 10, 30, 9, 0, 0);

let built: Promise<string> | null = null;
const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-seeded-"));
afterAll(() => fs.rmSync(workDir, { recursive: true, force: true }));

function builtRadar(): Promise<string> {
  built ??= (async () => {
    const file = path.join(workDir, "built.db");
    process.env.DATABASE_URL = `file:${file}`;
    resetConfig();
    const { db, closeDatabase } = await import("@/lib/db/client");
    const { seed } = await import("@/lib/db/fixture");
    const { rebuildRollups } = await import("@/lib/db/rollups");
    const { sql } = db();
    seed(sql);
    sql.transaction(() => rebuildRollups(sql))();
    const { createSource } = await import("@/lib/server/tokens");
    const { ingestLines } = await import("@/lib/server/pipeline");
    const ingest = await import("@/lib/ingest");
    const { captureNames, readCapture } = await import("@/lib/ingest/test-fixtures");
    const fixtures = path.resolve(import.meta.dirname, "../../lib/ingest/fixtures/real-clients-2");
    const captures = [
      ...captureNames().map((name) => readCapture(name)),
      ...["claude-ratelimit-rejected", "codex-ratelimit-appserver-usage-limit"].map((name) => fs.readFileSync(path.join(fixtures, `${name}.jsonl`), "utf8")),
    ];
    for (const [index, text] of captures.entries()) {
      const source = await createSource(`capture-${index}`, `rr_seeded_${index}`, BUILT_AT);
      const capture = ingest.parseCapture(text);
      const lines = ingest.withoutIgnored(ingest.normalizeBatch(capture.format, capture.items, { receivedAt: BUILT_AT }).lines).lines;
      await ingestLines(source, lines, BUILT_AT);
    }
    await closeDatabase();
    return file;
  })();
  return built;
}

const answers = new Map<string, unknown>();

/** SQLite's answer is recorded under `name`; PostgreSQL's must equal it. */
export function sameAnswer(store: TestStore, name: string, answer: unknown): void {
  if (store === "sqlite") {
    answers.set(name, answer);
    return;
  }
  expect(answers.has(name), `SQLite answered "${name}" first`).toBe(true);
  expect(answer, name).toEqual(answers.get(name));
}

/** Like useStore (both-stores.ts), with the built radar's rows in the store. */
export function useSeededStore(store: TestStore): void {
  beforeAll(async () => {
    const file = await builtRadar();
    if (store === "sqlite") {
      const copy = path.join(workDir, "sqlite.db");
      fs.copyFileSync(file, copy);
      process.env.DATABASE_URL = `file:${copy}`;
    } else {
      const url = await freshDatabase(inject("postgresUrl"), "reads");
      const client = new pg.Client({ connectionString: url });
      const sqlite = new Database(file, { readonly: true });
      await client.connect();
      try {
        const { migratePostgres } = await import("@/lib/db/postgres/migrate");
        const { copyTables } = await import("@/lib/db/postgres/migrate-store");
        await migratePostgres(client);
        await copyTables(sqlite, client);
      } finally {
        sqlite.close();
        await client.end();
      }
      process.env.DATABASE_URL = url;
    }
    resetConfig();
  }, PATIENCE_MS);
  afterAll(async () => {
    if (store === "sqlite") {
      const { closeDatabase } = await import("@/lib/db/client");
      await closeDatabase();
    } else {
      const { closePool } = await import("@/lib/db/postgres/pool");
      const { closePostgresPrisma } = await import("@/lib/db/postgres/client");
      await Promise.all([closePool(), closePostgresPrisma()]);
    }
  });
}
