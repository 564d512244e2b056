import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, expect, inject } from "vitest";
import { resetConfig } from "@/lib/config";
import type { TestStore } from "./both-stores";
import { PATIENCE_MS } from "./patience";
import { freshDatabase } from "../../scripts/lib/postgres";

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
    recordOperations(sql);
    await closeDatabase();
    return file;
  })();
  return built;
}

/** What operators and the detector leave behind: incidents with notes, and audit entries. */
function recordOperations(sql: Database.Database): void {
  const { T0, M } = { T0: Date.UTC(2026, 10, 20, 12, 0, 0), M: 60_000 };
  const incident = sql.prepare(
    `INSERT INTO "Incident" (id, state, kind, provider, model, sourceId, startedAt, lastNoticeAt, endedAt, closedBy, notices, resetAt, threadCount, threads,
       acknowledgedBy, acknowledgedAt, silencedUntil) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const threads = (keys: number[], recovered: number | null) =>
    JSON.stringify(keys.map((thread, i) => ({ thread, firstNoticeAt: T0 + i * M, lastNoticeAt: T0 + 10 * M, notices: 2 + i, recoveredAt: recovered })));
  incident.run("inc-open", "open", "rate_limit", "openai", null, null, T0, T0 + 10 * M, null, null, 5, null, 3, threads([1, 2, 3], null), "ada@example.com", T0 + 11 * M, BUILT_AT + 3_600_000);
  incident.run("inc-closed", "closed", "capacity", null, null, "src-claude", T0 - 60 * M, T0 - 30 * M, T0 - 20 * M, "quiet", 4, T0, 2, threads([3, 4], T0 - 25 * M), null, null, null);
  incident.run("inc-forming", "forming", "transport", "anthropic", "claude-opus", null, T0, T0, null, null, 1, null, 1, threads([4], null), null, null, null);
  const note = sql.prepare(`INSERT INTO "IncidentNote" (incidentId, at, actor, text) VALUES (?, ?, ?, ?)`);
  note.run("inc-open", T0 + 12 * M, "ada@example.com", "paging the provider");
  note.run("inc-open", T0 + 12 * M, "bob@example.com", "same here");
  const audit = sql.prepare(`INSERT INTO "AuditEntry" (at, actor, action, target, reason, result, detail) VALUES (?, ?, ?, ?, ?, ?, ?)`);
  audit.run(T0, "ada@example.com", "stop", "th-2", "Looping", "ok", null);
  audit.run(T0 + M, "bob@example.com", "archive", "TH-3", null, "ok", '{"n":1}');
  audit.run(T0 + M, "ada@example.com", "snooze", null, "lunch", "refused", null);
  sql.prepare(`INSERT INTO "AlertDestination" (id, name, url, format, secret, createdAt, createdBy) VALUES (?, ?, ?, ?, ?, ?, ?)`)
    .run("dest-1", "ops", "https://hooks.example.com/a", "slack", "s3cret", T0, "ada@example.com");
  const rule = sql.prepare(`INSERT INTO "AlertRule" (id, destinationId, event, threshold, createdAt, createdBy) VALUES (?, 'dest-1', ?, ?, ?, 'ada@example.com')`);
  rule.run("rule-1", "incident.opened", null, T0);
  rule.run("rule-2", "limit.above", 90, T0 + M);
  const outbox = sql.prepare(
    `INSERT INTO "AlertOutbox" (dedupeKey, ruleId, destinationId, event, alert, state, attempts, createdAt, nextAttemptAt, lastAttemptAt, lastStatus, lastError, deliveredAt)
     VALUES (?, ?, 'dest-1', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const alert = (text: string) => JSON.stringify({ event: "incident.opened", text, subject: "inc-open", at: T0 });
  outbox.run("k-1", "rule-1", "incident.opened", alert("Incident opened"), "delivered", 1, T0, T0, T0 + 1000, 200, null, T0 + 1000);
  outbox.run("k-2", "rule-1", "incident.opened", alert("Another"), "pending", 2, T0 + M, T0 + 5 * M, T0 + 2 * M, 500, "server error", null);
  const delivery = sql.prepare(`INSERT INTO "AlertDelivery" (outboxId, at, status, error, result, durationMs) VALUES (?, ?, ?, ?, ?, ?)`);
  delivery.run(1, T0 + 1000, 200, null, "delivered", 120);
  delivery.run(2, T0 + M, 500, "server error", "pending", 80);
  delivery.run(2, T0 + 2 * M, 500, "server error", "pending", 90);
  sql.prepare(`INSERT INTO "AlertCondition" (key, event, raisedAt, subject) VALUES (?, ?, ?, ?)`).run("source.silent:src-codex", "source.silent", T0 + 3 * M, "codex@build-7");
  sql.prepare(`INSERT INTO "AlertSourceRhythm" (sourceId, lastSeenAt, usualGapMs) VALUES (?, ?, ?)`).run("src-codex", T0 + 3 * M, 60_000);
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
