import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freshDatabase } from "@/scripts/lib/postgres";
import { KEYS_STORED } from "./events";
import { migratePostgres } from "./migrate";
import { UNIT_OF_WORK_FACTS_SQL } from "./rollups";
import { numbered } from "./sql";
import { POSTGRES_FILTER, threadFilterSql } from "./thread-filter";

/**
 * Plans that must not depend on the statistics: a batch's statements run on tables whose
 * statistics lag far behind (autovacuum analyzes only now and then), and a plan that scans a
 * source's every row costs a little per batch at first and seconds per batch at a million events.
 */
let client: pg.Client;
const SOURCE = "src-plans";

beforeAll(async () => {
  client = new pg.Client({ connectionString: await freshDatabase(inject("postgresUrl"), "plans") });
  await client.connect();
  await migratePostgres(client);
  await client.query(`INSERT INTO "Source" (id, name, "createdAt") VALUES ($1, 'plans', now())`, [SOURCE]);
  const events = (from: number, to: number) =>
    client.query(
      `INSERT INTO "Event" ("sourceId", "idempotencyKey", format, type, at, "receivedAt", raw, normalized)
       SELECT $1, 'key-' || i, 'canonical', 'progress', now(), now(), '{}', '{}' FROM generate_series($2::int, $3::int) i`,
      [SOURCE, from, to],
    );
  // Threads with an episode of two attempts each, the retry notices among the events.
  const threads = (from: number, to: number) =>
    client.query(
      `WITH t AS (INSERT INTO "Thread" ("sourceId", "externalId", status, state, "createdAt", "updatedAt")
         SELECT $1, 'thread-' || i, 'idle', '{}', now(), now() FROM generate_series($2::int, $3::int) i RETURNING id),
       ep AS (INSERT INTO "Episode" ("threadId", seq, kind, "startedAt") SELECT id, 1, 'rate_limit', now() FROM t RETURNING id)
       INSERT INTO "Attempt" ("episodeId", n, "noticeAt") SELECT ep.id, n, now() FROM ep, generate_series(1, 2) n`,
      [SOURCE, from, to],
    );
  // Statistics taken while the source was small, then many more rows: what a busy day looks like.
  await events(1, 100);
  await threads(1, 50);
  await client.query(`ANALYZE`);
  await events(101, 30_000);
  await threads(51, 10_000);
  // Keys of folded progress lines.
  await client.query(`INSERT INTO "IngestKey" ("sourceId", key, "eventId") SELECT $1, 'folded-' || i, i FROM generate_series(1, 20000) i`, [SOURCE]);
  await client.query(`UPDATE "Event" SET type = 'retry', "threadId" = id % 10000 + 1 WHERE id % 4 = 0`);
});
afterAll(() => client?.end());

type PlanNode = { "Node Type": string; "Relation Name"?: string; "Index Name"?: string; "Index Cond"?: string; Plans?: PlanNode[] };
const nodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodes)];

describe("PostgreSQL plans that do not depend on the statistics", () => {
  it("a batch's idempotency check probes each key in the unique indexes, never a source's every event", async () => {
    const keys = Array.from({ length: 500 }, (_, i) => (i % 2 ? `key-${i * 50}` : `new-${i}`));
    const [{ "QUERY PLAN": [plan] }] = (await client.query(`EXPLAIN (FORMAT JSON) ${KEYS_STORED}`, [SOURCE, keys])).rows;
    const reads = nodes(plan.Plan).filter((node) => node["Relation Name"] === "Event" || node["Relation Name"] === "IngestKey");
    expect(reads.length).toBeGreaterThan(0);
    for (const node of reads) expect(node["Node Type"], JSON.stringify(node)).toMatch(/^Index (Only )?Scan$/);
    const stored = (await client.query<{ k: string }>(KEYS_STORED, [SOURCE, keys])).rows.map((row) => row.k);
    expect(new Set(stored)).toEqual(new Set(keys.filter((key) => key.startsWith("key-"))));
  });

  it("a unit of work's rollup facts read its episodes, attempts, notices and threads by index, never a whole table", async () => {
    const episodes = (await client.query<{ threadId: number; seq: number }>(`SELECT "threadId", seq FROM "Episode" ORDER BY id DESC LIMIT 60`)).rows;
    const notices = (await client.query<{ id: string }>(`SELECT id FROM "Event" WHERE type = 'retry' ORDER BY id DESC LIMIT 120`)).rows.map((row) => row.id);
    for (const [sql, params] of [
      [UNIT_OF_WORK_FACTS_SQL.EPISODES, [episodes.map((e) => e.threadId), episodes.map((e) => e.seq)]],
      [UNIT_OF_WORK_FACTS_SQL.EVENT_NOTICES, [notices]],
    ] as const) {
      const [{ "QUERY PLAN": [plan] }] = (await client.query(`EXPLAIN (FORMAT JSON) ${sql}`, [...params])).rows;
      const reads = nodes(plan.Plan).filter((node) => ["Event", "Episode", "Attempt", "Thread"].includes(node["Relation Name"] ?? ""));
      expect(reads.length).toBeGreaterThan(0);
      for (const node of reads) expect(node["Node Type"], JSON.stringify(node)).not.toBe("Seq Scan");
      // An index read of a whole kind of row (every retry notice, every thread not joined) grows with the table too.
      const conditions = nodes(plan.Plan).map((node) => node["Index Cond"] ?? "");
      expect(conditions.filter((condition) => condition.includes("type = 'retry'") || condition.includes('"joinedTo" IS NULL'))).toEqual([]);
    }
  });

  it("the board's text search is written in the trigram index's own expressions, and folds ASCII case only, as SQLite does", async () => {
    // Each column's match alone (the planner may still prefer reading 10,000 threads, so that is
    // ruled out here): only an index on the very expression the search uses can serve it.
    await client.query("BEGIN");
    try {
      await client.query("SET LOCAL enable_seqscan = off");
      for (const column of ["externalId", "title", "lastErrorMessage", "agent", "model"]) {
        const match = `SELECT id FROM "Thread" t WHERE ${POSTGRES_FILTER.contains(`t."${column}"`).replace("?", "$1")}`;
        const [{ "QUERY PLAN": [plan] }] = (await client.query(`EXPLAIN (FORMAT JSON) ${match}`, [POSTGRES_FILTER.containsParam("Thread-99")])).rows;
        expect(nodes(plan.Plan).map((node) => node["Index Name"]).filter(Boolean), column).toContain("Thread_search_idx");
      }
    } finally {
      await client.query("ROLLBACK");
    }
    const clause = threadFilterSql({ q: "Thread-99" }, Date.now());
    const sql = numbered(`SELECT id FROM "Thread" t WHERE ${clause.sql}`);
    const found = (await client.query<{ id: number }>(sql, clause.params)).rows;
    expect(found.length).toBe(111); // thread-99, thread-990 … 999, thread-9900 … 9999
    const folded = (await client.query<{ s: string; folded: string }>(
      `SELECT s, lower(s COLLATE "C") AS folded FROM unnest($1::text[]) s`,
      [["ÄÖÜ ABC é É İ straße ΣΑΣ", "MiXeD-Case_123", "ＡＢＣ Ⅻ"]],
    )).rows;
    expect(folded.map((row) => row.folded)).toEqual(["ÄÖÜ abc é É İ straße ΣΑΣ", "mixed-case_123", "ＡＢＣ Ⅻ"]);
  });
});
