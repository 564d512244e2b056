import type pg from "pg";
import { afterAll, describe, expect, inject, it } from "vitest";
import { PATIENCE_MS } from "@/e2e/support/patience";
import { freshDatabase } from "@/scripts/lib/postgres";
import type { IncidentRecord } from "@/lib/retry";
import type { StoredThread } from "../records/thread-state";
import { eventRowsOn } from "./events";
import { incidentRowsOn } from "./incidents";
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

/**
 * Two units of work at once, `a` and `b` each in its own transaction: `first` runs on `a` and
 * takes its lock, `second` starts on `b` and must wait for it, `thenFirst` finishes on `a`, which
 * commits; `second`'s answer is returned once it could go on.
 */
async function inTurn<T>(
  [observer, a, b]: [pg.PoolClient, pg.PoolClient, pg.PoolClient],
  steps: { first: (a: pg.PoolClient) => Promise<void>; second: (b: pg.PoolClient) => Promise<T>; thenFirst: (a: pg.PoolClient) => Promise<void> },
): Promise<T> {
  try {
    await a.query("BEGIN");
    await b.query("BEGIN");
    await steps.first(a);
    const second = steps.second(b);
    await waitingOnLock(observer, b);
    await steps.thenFirst(a);
    await a.query("COMMIT");
    const answer = await second;
    await b.query("COMMIT");
    return answer;
  } finally {
    for (const client of [observer, a, b]) client.release();
  }
}

const threadsOn = (client: pg.ClientBase) => threadRowsOn(client, rollupRowsOn(client));

describe("units of work of two instances", () => {
  it("create a new thread once: the second finds the thread the first created", async () => {
    let created = 0;
    const found = await inTurn(await instances(), {
      first: async (a) => expect(await threadsOn(a).findThread("src", "th-new")).toBeNull(),
      second: (b) => threadsOn(b).findThread("src", "th-new"),
      thenFirst: async (a) => void (created = (await threadsOn(a).createThread("src", "th-new", state("idle"), T0)).id),
    });
    expect(found?.id).toBe(created);
  });

  it("step one thread in turn: the second reads the state the first saved", async () => {
    const clients = await instances();
    const id = (await threadsOn(clients[0]).createThread("src", "th-1", state("idle"), T0)).id;
    let found: StoredThread | null = null;
    const second = await inTurn(clients, {
      first: async (a) => void (found = await threadsOn(a).findThread("src", "th-1")),
      second: (b) => threadsOn(b).threadById(id),
      thenFirst: (a) => threadsOn(a).saveThread({ ...found!, state: state("retrying") }, T0 + 1),
    });
    expect(second?.state.status).toBe("retrying");
  });

  it("check a source's keys in turn: a batch resent to another instance finds the keys the first stored", async () => {
    const clients = await instances();
    const thread = (await threadsOn(clients[0]).createThread("src", "th-1", state("idle"), T0)).id;
    let events: ReturnType<typeof eventRowsOn>;
    const stored = await inTurn(clients, {
      first: async (a) => {
        events = eventRowsOn(a);
        expect(await events.rows.storedKeys("src", ["k1", "k2"])).toEqual(new Set());
      },
      second: (b) => eventRowsOn(b).rows.storedKeys("src", ["k1", "k2"]),
      thenFirst: async () => {
        for (const key of ["k1", "k2"]) {
          await events.rows.insertEvent({ sourceId: "src", threadId: thread, idempotencyKey: key, format: "canonical", nativeType: null, event: { type: "attempt", at: T0, threadId: "th-1" }, kind: null, receivedAt: T0, raw: {} });
        }
        await events.flush();
      },
    });
    expect(stored).toEqual(new Set(["k1", "k2"]));
  });

  it("count into shared rollups without a deadlock: a batch waiting for the watchdog's thread holds none of the rows the watchdog counts into", async () => {
    const clients = await instances();
    const watched = (await threadsOn(clients[0]).createThread("src", "th-watched", state("retrying"), T0)).id;
    const other = (await threadsOn(clients[0]).createThread("src", "th-other", state("retrying"), T0)).id;
    let watchdog: ReturnType<typeof rollupRowsOn>;
    // Both threads have the same labels: their notices count into the same MetricTotal row.
    const second = await inTurn(clients, {
      first: async (a) => {
        watchdog = rollupRowsOn(a);
        await threadsOn(a).threadById(watched);
      },
      second: async (b) => {
        const batch = rollupRowsOn(b);
        await threadRowsOn(b, batch).threadById(other);
        await batch.noticesSeen(other, ["rate_limit"]);
        const thread = await threadRowsOn(b, batch).threadById(watched);
        await batch.flush();
        return thread?.id;
      },
      // The batch counted first and now waits for the watched thread: the watchdog counts into the same row.
      thenFirst: async () => {
        await watchdog.noticesSeen(watched, ["rate_limit"]);
        await watchdog.flush();
      },
    });
    expect(second).toBe(watched);
    const pool = pools[pools.length - 1];
    const { rows } = await pool.query<{ n: number }>(`SELECT n FROM "MetricTotal" WHERE fact = 'noticeSeen' AND kind = 'rate_limit'`);
    expect(rows).toEqual([{ n: 2 }]);
  });
  it("advance the incidents in turn: the second reads what the first saved, so a quiet incident closes once", async () => {
    const clients = await instances();
    const open: IncidentRecord = {
      id: "inc-1", state: "open", kind: "rate_limit", provider: "openai", model: "gpt-5", sourceId: null, startedAt: T0, lastNoticeAt: T0,
      endedAt: null, closedBy: null, notices: 3, resetAt: null, threads: [],
    };
    await incidentRowsOn(clients[0]).saveIncident(open);
    const second = await inTurn(clients, {
      // Two watchdog passes at once (a change of leader): both find the incident quiet.
      first: async (a) => void (await incidentRowsOn(a).activeIncidents()),
      second: (b) => incidentRowsOn(b).activeIncidents(),
      thenFirst: (a) => incidentRowsOn(a).saveIncident({ ...open, state: "closed", endedAt: T0, closedBy: "quiet" }),
    });
    expect(second).toEqual([]);
  });
});
