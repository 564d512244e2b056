import type pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { PATIENCE_MS } from "@/e2e/support/patience";
import { freshDatabase } from "@/e2e/support/postgres";
import { eventRowsOn } from "./events";
import { migratePostgres } from "./migrate";
import { openPool } from "./pool";
import { rollupRowsOn } from "./rollups";
import { threadRowsOn } from "./thread-state";
import { timestampFromMs } from "./time";

/**
 * Units of work of two instances on one database (two connections, as two processes would hold):
 * what locks.ts promises. Each case lets the first take its lock, sees the second wait for it
 * (PostgreSQL reports the backend waiting on a lock), then commits the first.
 */
const pools: pg.Pool[] = [];
afterAll(async () => {
  await Promise.all(pools.splice(0).map((p) => p.end()));
});

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

async function instances(): Promise<[pg.PoolClient, pg.PoolClient, pg.PoolClient]> {
  const url = await freshDatabase(inject("postgresUrl"), "locks");
  const pool = openPool(url);
  pools.push(pool);
  const setup = await pool.connect();
  await migratePostgres(setup);
  await setup.query(`INSERT INTO "Source" (id, name, "createdAt") VALUES ('src', 'codex@build-7', ${timestampFromMs("$1")})`, [T0]);
  return [setup, await pool.connect(), await pool.connect()];
}

/** Resolves once `client`'s backend waits on a lock held by another. */
async function waitingOnLock(observer: pg.ClientBase, client: pg.PoolClient): Promise<void> {
  const pid = (client as unknown as { processID: number }).processID;
  const until = Date.now() + PATIENCE_MS;
  while (Date.now() < until) {
    const { rows } = await observer.query<{ waiting: boolean }>(`SELECT wait_event_type = 'Lock' AS waiting FROM pg_stat_activity WHERE pid = $1`, [pid]);
    if (rows[0]?.waiting) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("the second unit of work never waited for the first one's lock");
}

const state = (status: string) => ({ status, settings: {} }) as never;

describe("units of work of two instances", () => {
  it("create a new thread once: the second finds the thread the first created", async () => {
    const [observer, a, b] = await instances();
    await a.query("BEGIN");
    await b.query("BEGIN");
    const threadsA = threadRowsOn(a, rollupRowsOn(a));
    expect(await threadsA.findThread("src", "th-new")).toBeNull();
    const second = threadRowsOn(b, rollupRowsOn(b)).findThread("src", "th-new");
    await waitingOnLock(observer, b);
    const created = await threadsA.createThread("src", "th-new", state("idle"), T0);
    await a.query("COMMIT");
    expect((await second)?.id).toBe(created.id);
    await b.query("COMMIT");
    a.release();
    b.release();
    observer.release();
  });

  it("step one thread in turn: the second reads the state the first saved", async () => {
    const [observer, a, b] = await instances();
    const id = (await threadRowsOn(observer, rollupRowsOn(observer)).createThread("src", "th-1", state("idle"), T0)).id;
    await a.query("BEGIN");
    await b.query("BEGIN");
    const threadsA = threadRowsOn(a, rollupRowsOn(a));
    const found = (await threadsA.findThread("src", "th-1"))!;
    const second = threadRowsOn(b, rollupRowsOn(b)).threadById(id);
    await waitingOnLock(observer, b);
    await threadsA.saveThread({ ...found, state: state("retrying") }, T0 + 1);
    await a.query("COMMIT");
    expect((await second)?.state.status).toBe("retrying");
    await b.query("COMMIT");
    a.release();
    b.release();
    observer.release();
  });

  it("check a source's keys in turn: a batch resent to another instance finds the keys the first stored", async () => {
    const [observer, a, b] = await instances();
    const thread = (await threadRowsOn(observer, rollupRowsOn(observer)).createThread("src", "th-1", state("idle"), T0)).id;
    await a.query("BEGIN");
    await b.query("BEGIN");
    const eventsA = eventRowsOn(a);
    expect(await eventsA.rows.storedKeys("src", ["k1", "k2"])).toEqual(new Set());
    const second = eventRowsOn(b).rows.storedKeys("src", ["k1", "k2"]);
    await waitingOnLock(observer, b);
    for (const key of ["k1", "k2"]) {
      await eventsA.rows.insertEvent({ sourceId: "src", threadId: thread, idempotencyKey: key, format: "canonical", nativeType: null, event: { type: "attempt", at: T0, threadId: "th-1" }, kind: null, receivedAt: T0, raw: {} });
    }
    await eventsA.flush();
    await a.query("COMMIT");
    expect(await second).toEqual(new Set(["k1", "k2"]));
    await b.query("COMMIT");
    a.release();
    b.release();
    observer.release();
  });
});
