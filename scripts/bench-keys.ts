import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { deriveKey, earlierKey, keyLookups } from "../lib/ingest/key";
import { migrate } from "../lib/db/migrate";

/**
 * Derived idempotency keys, as laid out in the Event table's unique index: time first (how
 * lib/ingest/key.ts derives them) against hash first (their earlier form, `earlierKey`). Every
 * line without an `id` of its own is keyed so: all native (Codex, Claude Code) and OTLP lines.
 * Batches of 50 events, each inserted and committed, into one table growing to 200k events;
 * what a batch costs over the last quarter of them, and what looking up the batch's keys (both
 * forms, as the stores do) costs then.
 */
const BATCH = 50;
const BATCHES = 4_000;

interface Layout {
  insertMsPerBatch: number;
  lookupMsPerBatch: number;
}

function run(layout: "time first" | "hash first"): Layout {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-bench-keys-"));
  const file = path.join(dir, "keys.db");
  const db = new Database(file);
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    migrate(db);
    db.prepare(`INSERT INTO "Source" (id, name, createdAt) VALUES ('s', 's', 0)`).run();
    const insert = db.prepare(`INSERT INTO "Event" (sourceId, idempotencyKey, format, type, at, receivedAt, raw, normalized) VALUES ('s', ?, 'codex-exec', 'progress', ?, ?, ?, ?)`);
    const stored = db.prepare(`SELECT k.value FROM json_each(?) k WHERE EXISTS (SELECT 1 FROM "Event" WHERE sourceId = 's' AND idempotencyKey = k.value)`).pluck();
    const base = Date.UTC(2026, 11, 1);
    let insertMs = 0;
    let lookupMs = 0;
    const measured = BATCHES / 4;
    for (let b = 0; b < BATCHES; b++) {
      const rows = Array.from({ length: BATCH }, (_, i) => {
        const n = b * BATCH + i;
        const at = base + n * 10;
        const key = deriveKey(`codex-exec\u0000thread-${n % 40}\u0000{"line":${n}}`, "codex-exec", at);
        const json = `{"type":"progress","at":${at},"threadId":"thread-${n % 40}"}`;
        return { key: layout === "time first" ? key : earlierKey(key)!, at, json };
      });
      const measuring = b >= BATCHES - measured;
      const t0 = performance.now();
      stored.all(JSON.stringify(keyLookups(rows.map((row) => row.key)).lookup));
      const t1 = performance.now();
      db.transaction(() => {
        for (const row of rows) insert.run(row.key, row.at, row.at, row.json, row.json);
      })();
      const t2 = performance.now();
      if (measuring) {
        lookupMs += t1 - t0;
        insertMs += t2 - t1;
      }
      // As the server's commits do once the WAL passes its autocheckpoint: the WAL starts over.
      if (b % 100 === 99) db.pragma("wal_checkpoint(TRUNCATE)");
    }
    return {
      insertMsPerBatch: +(insertMs / measured).toFixed(2),
      lookupMsPerBatch: +(lookupMs / measured).toFixed(2),
    };
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface KeysBench {
  events: number;
  timeFirst: Layout;
  hashFirst: Layout;
}

export function benchKeys(): KeysBench {
  return { events: BATCH * BATCHES, timeFirst: run("time first"), hashFirst: run("hash first") };
}

export function formatKeysBench(result: KeysBench): string {
  const line = (name: string, l: Layout) =>
    `  ${name}: insert and commit ${l.insertMsPerBatch} ms per batch of ${BATCH}, key lookup ${l.lookupMsPerBatch} ms`;
  return [
    `derived keys at ${result.events.toLocaleString("en")} events (the last quarter of the batches):`,
    line("time first (lib/ingest/key.ts)", result.timeFirst),
    line("hash first (the earlier form)", result.hashFirst),
  ].join("\n");
}

// `npx tsx scripts/bench-keys.ts`: this part alone.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) console.log(formatKeysBench(benchKeys()));
