import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freshDatabase } from "@/scripts/lib/postgres";
import { openSeeded } from "../fixture";
import { migratePostgres } from "./migrate";
import { migrateStore, MigrateStoreError } from "./migrate-store";
import { types } from "./pool";
import { msFromTimestamp } from "./time";

/**
 * `npm run migrate-store` against a real throwaway PostgreSQL: a SQLite radar with real data (the
 * real clients' captures ingested through the in-process pipeline, and the insights fixture with
 * its episodes, attempts and rollups) arrives row for row, times compared as epoch ms.
 */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-migrate-store-"));
const radarFile = path.join(dir, "radar.db");
process.env.DATABASE_URL = `file:${radarFile}`;

const clients: pg.Client[] = [];
async function connect(url: string): Promise<pg.Client> {
  // BIGINT ids (Event.id) as numbers, as lib/db reads them.
  const client = new pg.Client({ connectionString: url, types });
  await client.connect();
  clients.push(client);
  return client;
}

beforeAll(async () => {
  const { createSource } = await import("@/lib/server/tokens");
  const { ingestLines } = await import("@/lib/server/pipeline");
  const ingest = await import("@/lib/ingest");
  const { captureNames, readCapture } = await import("@/lib/ingest/test-fixtures");
  const { db } = await import("@/lib/db/client");
  const captures = [
    ...captureNames().map((name) => readCapture(name)),
    ...["claude-ratelimit-rejected", "codex-ratelimit-appserver-usage-limit"].map((name) =>
      fs.readFileSync(path.resolve(import.meta.dirname, "../../ingest/fixtures/real-clients-2", `${name}.jsonl`), "utf8"),
    ),
  ];
  expect(captures.length).toBeGreaterThan(4);
  const now = Date.now();
  for (const [index, text] of captures.entries()) {
    const source = await createSource(`capture-${index}`, `rr_move_${index}_${now}`, now);
    const capture = ingest.parseCapture(text);
    const lines = ingest.withoutIgnored(ingest.normalizeBatch(capture.format, capture.items, { receivedAt: now }).lines).lines;
    await ingestLines(source, lines, now);
  }
  // A person signed in through the authentication library's tables (Prisma's DateTime columns).
  const { prisma } = db();
  const at = new Date(now);
  await prisma.user.create({ data: { id: "u1", name: "Ada", email: "ada@example.com", role: "admin", createdAt: at, updatedAt: at } });
  await prisma.session.create({ data: { id: "s1", token: "tok", userId: "u1", expiresAt: new Date(now + 3_600_000), createdAt: at, updatedAt: at } });
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.end()));
  const { db } = await import("@/lib/db/client");
  await db().prisma.$disconnect();
  db().sql.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Every row of every table as text: times as epoch ms, booleans as true/false, sorted. */
async function snapshot(file: string, client: pg.Client): Promise<{ sqlite: Record<string, unknown[]>; postgres: Record<string, unknown[]> }> {
  const { rows: columns } = await client.query<{ table: string; column: string; type: string }>(
    `SELECT table_name AS table, column_name AS column, data_type AS type FROM information_schema.columns
     WHERE table_schema = current_schema() AND table_name <> '_radar_migrations' ORDER BY table_name, column_name`,
  );
  const tables = new Map<string, { column: string; type: string }[]>();
  for (const c of columns) tables.set(c.table, [...(tables.get(c.table) ?? []), c]);
  const sqlite = new Database(file, { readonly: true });
  const out = { sqlite: {} as Record<string, unknown[]>, postgres: {} as Record<string, unknown[]> };
  const sorted = (rows: unknown[][]) => rows.map((row) => JSON.stringify(row)).sort();
  for (const [table, cols] of tables) {
    const lite = sqlite.prepare(`SELECT ${cols.map((c) => `"${c.column}"`).join(", ")} FROM "${table}"`).raw(true).safeIntegers(true).all() as unknown[][];
    out.sqlite[table] = sorted(
      lite.map((row) =>
        row.map((value, i) => (value === null ? null : cols[i].type === "boolean" ? String(value === 1n) : cols[i].type === "double precision" ? String(Number(value)) : String(value))),
      ),
    );
    const select = cols.map((c) => (c.type.startsWith("timestamp") ? `${msFromTimestamp(`"${c.column}"`)}::text` : `"${c.column}"::text`));
    const { rows } = await client.query({ text: `SELECT ${select.join(", ")} FROM "${table}"`, rowMode: "array" });
    out.postgres[table] = sorted(rows);
  }
  sqlite.close();
  return out;
}

describe("npm run migrate-store", () => {
  it("moves a SQLite radar with real data to PostgreSQL: identical rows in every table", async () => {
    const url = await freshDatabase(inject("postgresUrl"));
    const copies = await migrateStore({ from: `file:${radarFile}`, to: url });
    const byTable = Object.fromEntries(copies.map((copy) => [copy.table, copy.rows]));
    for (const table of ["Source", "Thread", "Event", "Episode", "Attempt", "LimitSnapshot", "User", "Session"]) expect(byTable[table], table).toBeGreaterThan(0);
    // Foreign-key order: a table comes after those it references.
    const order = copies.map((copy) => copy.table);
    expect(order.indexOf("Source")).toBeLessThan(order.indexOf("Thread"));
    expect(order.indexOf("Thread")).toBeLessThan(order.indexOf("Episode"));
    expect(order.indexOf("Episode")).toBeLessThan(order.indexOf("Attempt"));

    const { sqlite, postgres } = await snapshot(radarFile, await connect(url));
    expect(Object.keys(postgres).sort()).toEqual(Object.keys(sqlite).sort());
    for (const table of Object.keys(sqlite)) expect(postgres[table], table).toEqual(sqlite[table]);
  });

  it("moves the insights fixture (episodes, attempts, rollups) and continues every id sequence past the copied ids", async () => {
    const seeded = openSeeded();
    try {
      // An event deleted after it was stored: its id must never be handed out again.
      const last = seeded.handles.sql.prepare(`SELECT max(id) FROM "Event"`).pluck().get() as number;
      seeded.handles.sql.prepare(`DELETE FROM "Event" WHERE id = ?`).run(last);
      const url = await freshDatabase(inject("postgresUrl"));
      await migrateStore({ from: `file:${seeded.handles.path}`, to: url });
      const client = await connect(url);
      const { sqlite, postgres } = await snapshot(seeded.handles.path, client);
      for (const table of Object.keys(sqlite)) expect(postgres[table], table).toEqual(sqlite[table]);
      expect(postgres.Rollup.length).toBeGreaterThan(0);

      const { rows } = await client.query(
        `INSERT INTO "Event" ("sourceId", "idempotencyKey", format, type, at, "receivedAt", raw, normalized)
         VALUES ('src-codex', 'after-move', 'canonical', 'progress', now(), now(), '{}', '{}') RETURNING id`,
      );
      expect(rows[0].id).toBe(last + 1);
      const episode = await client.query(`INSERT INTO "Episode" ("threadId", seq, kind, "startedAt") VALUES (1, 9, 'rate_limit', now()) RETURNING id`);
      expect(episode.rows[0].id).toBe(5);
    } finally {
      await seeded.close();
    }
  });

  it("refuses a target that already holds data, and leaves it as it was", async () => {
    const url = await freshDatabase(inject("postgresUrl"));
    const client = await connect(url);
    await migratePostgres(client);
    await client.query(`INSERT INTO "Setting" (key, value, "updatedAt") VALUES ('k', 'v', now())`);
    await expect(migrateStore({ from: `file:${radarFile}`, to: url })).rejects.toThrow(/the target database already holds data \(Setting\): move into an empty database/);
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM "Source"`);
    expect(rows[0].n).toBe(0);
  });

  it("copies all or nothing: a value PostgreSQL cannot hold stops the copy with its table and column, and the target stays empty", async () => {
    const file = path.join(dir, "too-large.db");
    const { db } = await import("@/lib/db/client");
    db().sql.prepare("VACUUM INTO ?").run(file);
    const sqlite = new Database(file);
    sqlite.prepare(`UPDATE "Event" SET "delayMs" = 3000000000 WHERE id = (SELECT max(id) FROM "Event")`).run();
    sqlite.close();
    const url = await freshDatabase(inject("postgresUrl"));
    const move = migrateStore({ from: `file:${file}`, to: url });
    await expect(move).rejects.toThrow(MigrateStoreError);
    await expect(move).rejects.toThrow(/Event\.delayMs: does not fit PostgreSQL's INTEGER \(3000000000\)/);
    const client = await connect(url);
    for (const table of ["Source", "Thread", "Event"]) {
      const { rows } = await client.query(`SELECT count(*)::int AS n FROM "${table}"`);
      expect(rows[0].n, table).toBe(0);
    }
  });
});
