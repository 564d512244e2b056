import pg from "pg";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { insertSource, STORES, useStore, type TestStore } from "@/e2e/support/both-stores";
import type { NormalizedEvent, NormalizedLine } from "@/lib/ingest/types";
import type { SourceRecord } from "./records/sources";

/**
 * A thread's page on both stores: its lineage, and one snapshot for all of it. The page is many
 * statements; a unit of work (a watchdog pass that ends an episode exhausted) committing between
 * them must be seen whole or not at all, never a thread still `stalled` beside its episode
 * already `exhausted` (e2e/api/ingest.test.ts saw that on PostgreSQL when the page was read
 * through Prisma, a statement per pooled connection).
 */
const SOURCE: SourceRecord = { id: "src-detail", name: "detail", policy: null, capacityRecovery: false, resumeAtReset: false, incidentMinThreads: null, incidentWindowMs: null };
const T0 = Date.UTC(2026, 10, 20, 12, 0, 0);

let key = 0;
const line = (event: Partial<NormalizedEvent>): NormalizedLine => ({
  index: 0,
  event: { at: T0, ...event } as NormalizedEvent,
  nativeType: null,
  format: "canonical",
  idempotencyKey: `detail-${++key}`,
  raw: event,
  receivedAt: T0,
});

/**
 * Ends every episode of the thread and marks the thread failed, in one transaction on a
 * connection other than the page's: synchronous on SQLite (the writer connection), so it can run
 * between two statements of a page read that never awaits.
 */
async function ending(store: TestStore): Promise<(threadKey: number) => void | Promise<void>> {
  if (store === "sqlite") {
    const { db } = await import("./client");
    return (threadKey) => {
      const { sql } = db();
      sql.transaction(() => {
        sql.prepare(`UPDATE "Thread" SET status = 'failed' WHERE id = ?`).run(threadKey);
        sql.prepare(`UPDATE "Episode" SET outcome = 'failed' WHERE threadId = ?`).run(threadKey);
      })();
    };
  }
  const { inTransaction } = await import("./postgres/pool");
  return (threadKey) =>
    inTransaction(async (client) => {
      await client.query(`UPDATE "Thread" SET status = 'failed' WHERE id = $1`, [threadKey]);
      await client.query(`UPDATE "Episode" SET outcome = 'failed' WHERE "threadId" = $1`, [threadKey]);
    });
}

/**
 * Runs `write` once, just before the thread page's first statement on the Episode table is
 * executed (after its thread row was read): on SQLite synchronously, inside the page's
 * statement on its read connection; on PostgreSQL before that statement is sent.
 */
const restores: (() => void)[] = [];
afterEach(() => restores.splice(0).forEach((restore) => restore()));

async function beforeEpisodesRead(store: TestStore, write: () => void | Promise<void>): Promise<() => boolean> {
  let done = false;
  const due = (text: unknown) => !done && typeof text === "string" && /FROM "Episode"/.test(text) && (done = true);
  if (store === "sqlite") {
    const { db } = await import("./client");
    const statementClass = Object.getPrototypeOf(db().sql.prepare("SELECT 1")) as { all: (...args: unknown[]) => unknown; source: string };
    const all = statementClass.all;
    statementClass.all = function (this: { source: string }, ...args: unknown[]) {
      if (due(this.source)) void write();
      return all.apply(this, args);
    };
    restores.push(() => (statementClass.all = all));
  } else {
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      if (!due(args[0])) return (query as (...a: unknown[]) => unknown).apply(this, args);
      return (async () => {
        await write();
        return (query as (...a: unknown[]) => unknown).apply(this, args);
      })();
    } as typeof query;
    restores.push(() => (pg.Client.prototype.query = query));
  }
  return () => done;
}

describe.each(STORES)("a thread's page on %s", (store) => {
  useStore(store);
  const keys: Record<string, number> = {};

  beforeAll(async () => {
    await insertSource(store, SOURCE, T0);
    const { ingestLines } = await import("@/lib/server/pipeline");
    await ingestLines(SOURCE, [
      line({ threadId: "parent", type: "turn.started", turnId: "p1" }),
      line({ threadId: "child", type: "turn.started", turnId: "c1", parentThreadId: "parent" }),
      line({ threadId: "child", type: "retry", turnId: "c1", attempt: 1, maxAttempts: 5, delayMs: 600_000, error: { httpStatus: 429 } } as Partial<NormalizedEvent>),
    ], T0);
    const { threadsByExternalId } = await import("./threads");
    for (const name of ["parent", "child"]) keys[name] = (await threadsByExternalId(name))[0].id;
  });

  it("names its parent and its children", async () => {
    const { threadDetail } = await import("./threads");
    const child = (await threadDetail(keys.child, T0 + 1_000))!;
    expect(child.parent).toMatchObject({ id: "parent", key: keys.parent });
    expect(child.children).toEqual([]);
    const parent = (await threadDetail(keys.parent, T0 + 1_000))!;
    expect(parent.parent).toBeNull();
    expect(parent.children.map((thread) => thread.id)).toEqual(["child"]);
  });

  it("is one snapshot: a commit between its statements is seen whole or not at all", async () => {
    const { threadDetail } = await import("./threads");
    const end = await ending(store);
    const before = (await threadDetail(keys.child, T0 + 1_000))!;
    expect(before.thread.status).not.toBe("failed");
    expect(before.episodes).toHaveLength(1);
    expect(before.episodes[0].outcome).not.toBe("failed");

    const wrote = await beforeEpisodesRead(store, () => end(keys.child));
    const during = (await threadDetail(keys.child, T0 + 1_000))!;
    expect(wrote()).toBe(true);
    // The snapshot was taken with the thread row: the episodes read after the commit are as they were with it.
    expect(during.thread.status).toBe(before.thread.status);
    expect(during.episodes).toEqual(before.episodes);

    const after = (await threadDetail(keys.child, T0 + 1_000))!;
    expect(after.thread.status).toBe("failed");
    expect(after.episodes.map((episode) => episode.outcome)).toEqual(["failed"]);
  });
});
