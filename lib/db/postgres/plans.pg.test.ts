import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freshDatabase } from "@/scripts/lib/postgres";
import { KEYS_STORED } from "./events";
import { migratePostgres } from "./migrate";

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
  // Statistics taken while the source was small, then many more events: what a busy day looks like.
  await events(1, 100);
  await client.query(`ANALYZE "Event"`);
  await events(101, 30_000);
});
afterAll(() => client?.end());

type PlanNode = { "Node Type": string; "Relation Name"?: string; "Index Name"?: string; Plans?: PlanNode[] };
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
});
