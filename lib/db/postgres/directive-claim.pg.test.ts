import pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { freshDatabase } from "@/scripts/lib/postgres";
import { postgresClients } from "@/e2e/support/postgres-clients";
import { acknowledgeDirective, claimDirectives } from "./directive-claim";
import { migratePostgres } from "./migrate";
import { timestampFromMs } from "./time";

/** Directive delivery on a real cluster: concurrent pollers on their own connections. */
const { connect, end } = postgresClients();
afterAll(async () => {
  await end();
});

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0, 0);
const LEASE_MS = 30_000;

/** A migrated database with one source, one thread and `count` pending directives created a millisecond apart. */
async function seeded(count: number): Promise<{ url: string; client: pg.Client }> {
  const url = await freshDatabase(inject("postgresUrl"));
  const client = await connect(url);
  await migratePostgres(client);
  await client.query(`INSERT INTO "Source" (id, name, "createdAt") VALUES ('src', 'codex@build-7', ${timestampFromMs("$1")})`, [T0]);
  await client.query(
    `INSERT INTO "Thread" ("sourceId", "externalId", status, state, "createdAt", "updatedAt") VALUES ('src', 'th-1', 'retrying', '{}', ${timestampFromMs("$1")}, ${timestampFromMs("$1")})`,
    [T0],
  );
  await client.query(
    `INSERT INTO "Directive" (id, "sourceId", "threadId", "dedupeKey", kind, origin, reason, state, "createdAt")
     SELECT 'd-' || lpad(n::text, 4, '0'), 'src', 1, 'key-' || n, 'interrupt', 'policy', 'exhausted', 'pending', ${timestampFromMs("$1::bigint + n")}
     FROM generate_series(1, $2::int) AS n`,
    [T0, count],
  );
  return { url, client };
}

describe("directives claimed once (FOR UPDATE SKIP LOCKED with a delivery lease)", () => {
  it("three pollers on three connections claim 200 pending directives at once: each is delivered exactly once", async () => {
    const { url, client } = await seeded(200);
    const pollers = await Promise.all([1, 2, 3].map(() => connect(url)));
    const delivered = await Promise.all(
      pollers.map(async (poller) => {
        const ids: string[] = [];
        // Small claims so the three interleave; each polls until nothing is left for it.
        for (;;) {
          const claimed = await claimDirectives(poller, "src", T0 + 1_000, LEASE_MS, 7);
          if (!claimed.length) return ids;
          ids.push(...claimed.map((directive) => directive.id));
        }
      }),
    );
    const all = delivered.flat();
    expect(all).toHaveLength(200);
    expect(new Set(all).size).toBe(200);
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM "Directive" WHERE state = 'delivered' AND "deliveredAt" = ${timestampFromMs("$1")}`, [T0 + 1_000]);
    expect(rows[0].n).toBe(200);
  });

  it("a claim carries what the relay needs, oldest first", async () => {
    const { client } = await seeded(3);
    const claimed = await claimDirectives(client, "src", T0 + 1_000, LEASE_MS);
    expect(claimed).toEqual(
      [1, 2, 3].map((n) => ({ id: `d-000${n}`, threadId: "th-1", turnId: null, kind: "interrupt", reason: "exhausted", createdAt: new Date(T0 + n).toISOString() })),
    );
    expect(await claimDirectives(client, "other-source", T0 + 1_000, LEASE_MS)).toEqual([]);
  });

  it("an unacknowledged directive is redelivered after its lease, to any poller; an acknowledged one never", async () => {
    const { url, client } = await seeded(2);
    const [a, b] = await Promise.all([connect(url), connect(url)]);
    const first = await claimDirectives(a, "src", T0, LEASE_MS);
    expect(first.map((d) => d.id)).toEqual(["d-0001", "d-0002"]);
    expect((await acknowledgeDirective(a, "src", "d-0002", "acknowledged", null, T0 + 10)).ok).toBe(true);
    // Within the lease nobody gets it again.
    expect(await claimDirectives(b, "src", T0 + LEASE_MS - 1, LEASE_MS)).toEqual([]);
    const again = await claimDirectives(b, "src", T0 + LEASE_MS, LEASE_MS);
    expect(again.map((d) => d.id)).toEqual(["d-0001"]);
    // The redelivery started a new lease.
    expect(await claimDirectives(a, "src", T0 + LEASE_MS + 1, LEASE_MS)).toEqual([]);
    const { rows } = await client.query(`SELECT id, state FROM "Directive" ORDER BY id`);
    expect(rows).toEqual([
      { id: "d-0001", state: "delivered" },
      { id: "d-0002", state: "acknowledged" },
    ]);
  });

  it("a second acknowledgement changes nothing; a different answer is refused; an unknown one is 404", async () => {
    const { url, client } = await seeded(1);
    await claimDirectives(client, "src", T0, LEASE_MS);
    const snapshot = async () => (await client.query(`SELECT * FROM "Directive"`)).rows;
    const first = await acknowledgeDirective(client, "src", "d-0001", "acknowledged", "stopped", T0 + 5);
    expect(first).toEqual({ ok: true, threadId: 1, turnId: null, kind: "interrupt", key: "key-1", repeated: false });
    const after = await snapshot();
    // Two instances answering at the same moment: one records it, the other sees it repeated.
    const [x, y] = await Promise.all([connect(url), connect(url)]);
    const both = await Promise.all([x, y].map((c) => acknowledgeDirective(c, "src", "d-0001", "acknowledged", "again", T0 + 9)));
    expect(both).toEqual([0, 1].map(() => ({ ...first, repeated: true })));
    expect(await snapshot()).toEqual(after);
    expect(await acknowledgeDirective(client, "src", "d-0001", "failed", null, T0 + 9)).toEqual({ ok: false, status: 409, error: 'Directive d-0001 was already answered "acknowledged".' });
    expect(await acknowledgeDirective(client, "other", "d-0001", "acknowledged", null, T0 + 9)).toMatchObject({ ok: false, status: 404 });
    expect(await snapshot()).toEqual(after);
  });
});
