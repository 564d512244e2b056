import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import type { NormalizedEvent, NormalizedLine } from "@/lib/ingest/types";
import { countUnitsOfWork, execsDuring, normalizedLines, useFreshDatabase } from "@/e2e/support/in-process";

/**
 * Group commit, in process on a real SQLite file: units of work that arrive together share one
 * BEGIN IMMEDIATE … COMMIT, each still answered with its own result only once committed, and one
 * that fails is rolled back alone.
 */
useFreshDatabase("group-commit");

type Modules = {
  pipeline: typeof import("@/lib/server/pipeline");
  tokens: typeof import("@/lib/server/tokens");
  client: typeof import("./client");
  uow: typeof import("./unit-of-work");
};
let m: Modules;
beforeAll(async () => {
  m = {
    pipeline: await import("@/lib/server/pipeline"),
    tokens: await import("@/lib/server/tokens"),
    client: await import("./client"),
    uow: await import("./unit-of-work"),
  };
});

const sql = () => m.client.db().sql;
let sourceSeq = 0;
const source = (name: string) => m.tokens.createSource(`${name}-${++sourceSeq}`, `rr_${name}_${sourceSeq}_${Date.now()}`);
const line = (threadId: string, event: Partial<NormalizedEvent>, receivedAt: number): NormalizedLine[] =>
  normalizedLines([event], { receivedAt, base: { at: receivedAt, threadId } });
const eventCount = (sourceId: string) => sql().prepare(`SELECT count(*) FROM "Event" WHERE sourceId = ?`).pluck().get(sourceId) as number;

const counted = <T>(run: () => Promise<T>) => countUnitsOfWork(sql(), run);

describe("group commit", () => {
  it("commits single-event batches that arrive together in one transaction, each answered with its own result", async () => {
    const s = await source("together");
    const now = Date.now();
    const { units, value } = await counted(() =>
      Promise.all(Array.from({ length: 8 }, (_, i) => m.pipeline.ingestLines(s, line(`t-${i % 3}`, { type: "turn.started", turnId: `u${i}`, at: now + i }, now), now))),
    );
    expect(units).toBe(1);
    expect(value.map((outcome) => outcome.accepted)).toEqual(Array(8).fill(1));
    // Each answer names its own thread.
    const keys = sql().prepare(`SELECT externalId, id FROM "Thread" WHERE sourceId = ?`).all(s.id) as { externalId: string; id: number }[];
    const key = new Map(keys.map((row) => [row.externalId, row.id]));
    expect(value.map((outcome) => outcome.threadIds)).toEqual(Array.from({ length: 8 }, (_, i) => [key.get(`t-${i % 3}`)]));
    expect(eventCount(s.id)).toBe(8);
  });

  it("answers an idempotent resend inside a group as a duplicate, stored once", async () => {
    const s = await source("resend");
    const now = Date.now();
    const sent = line("t", { type: "turn.started", turnId: "u1" }, now);
    const [first, again, other] = await Promise.all([
      m.pipeline.ingestLines(s, sent, now),
      m.pipeline.ingestLines(s, sent, now),
      m.pipeline.ingestLines(s, line("t", { type: "turn.completed", turnId: "u1", at: now + 1 }, now), now),
    ]);
    expect(first).toMatchObject({ accepted: 1, duplicates: 0 });
    expect(again).toMatchObject({ accepted: 0, duplicates: 1 });
    expect(other).toMatchObject({ accepted: 1, duplicates: 0 });
    expect(eventCount(s.id)).toBe(2);
  });

  it("rolls back only the member that fails; the others commit", async () => {
    const s = await source("one-bad");
    const now = Date.now();
    const results = await Promise.allSettled([
      m.pipeline.ingestLines(s, line("good-1", { type: "turn.started", turnId: "u1" }, now), now),
      m.uow.transaction(async (tx) => {
        await tx.touchSource(s.id, now + 99);
        await tx.insertEvent({ sourceId: s.id, threadId: null, idempotencyKey: "bad", format: "canonical", nativeType: null, event: { type: "unknown", at: now, threadId: "" }, kind: null, receivedAt: now, raw: {} });
        throw new Error("this unit of work fails");
      }),
      m.pipeline.ingestLines(s, line("good-2", { type: "turn.started", turnId: "u1" }, now), now),
    ]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason.message).toBe("this unit of work fails");
    // The failed member's writes are gone, the others' are all there.
    expect(sql().prepare(`SELECT count(*) FROM "Event" WHERE sourceId = ? AND idempotencyKey = 'bad'`).pluck().get(s.id)).toBe(0);
    expect(eventCount(s.id)).toBe(2);
    expect(sql().prepare(`SELECT lastSeenAt FROM "Source" WHERE id = ?`).pluck().get(s.id)).toBe(now);
  });

  it("runs a unit of work alone without a savepoint; failing, it leaves nothing and the next one commits", async () => {
    const s = await source("alone");
    const now = Date.now();
    const { executed, result } = await execsDuring(sql(), () =>
      m.uow.transaction(async (tx) => {
        await tx.touchSource(s.id, now + 99);
        await tx.insertEvent({ sourceId: s.id, threadId: null, idempotencyKey: "alone-bad", format: "canonical", nativeType: null, event: { type: "unknown", at: now, threadId: "" }, kind: null, receivedAt: now, raw: {} });
        throw new Error("this unit of work fails alone");
      }),
    );
    expect(result.status === "rejected" && (result.reason as Error).message).toBe("this unit of work fails alone");
    // A savepoint would make SQLite copy each page the unit of work changes into a statement journal.
    expect(executed.filter((text) => text.includes("SAVEPOINT"))).toEqual([]);
    expect(executed).toContain("ROLLBACK");
    expect(sql().inTransaction).toBe(false);
    expect(sql().prepare(`SELECT count(*) FROM "Event" WHERE sourceId = ?`).pluck().get(s.id)).toBe(0);
    expect(sql().prepare(`SELECT lastSeenAt FROM "Source" WHERE id = ?`).pluck().get(s.id)).not.toBe(now + 99);
    await m.pipeline.ingestLines(s, line("after", { type: "turn.started", turnId: "u1" }, now), now);
    expect(eventCount(s.id)).toBe(1);
  });

  it("answers a member only once the group has committed", async () => {
    const s = await source("committed");
    const now = Date.now();
    const seen: number[] = [];
    const reader = () => m.client.committedRead((read) => read.prepare(`SELECT count(*) FROM "Event" WHERE sourceId = ?`).pluck().get(s.id) as number);
    await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        m.pipeline.ingestLines(s, line(`c-${i}`, { type: "turn.started", turnId: "u1" }, now), now).then(async () => seen.push(await reader())),
      ),
    );
    // Every member saw all four rows committed when its answer came: they committed together.
    expect(seen).toEqual([4, 4, 4, 4]);
  });

  it("never runs a unit of work ahead of what was queued before it", async () => {
    const order: string[] = [];
    const first = m.uow.transaction(async () => void order.push("first"));
    const between = m.client.serialized(() => void order.push("between"));
    const last = m.uow.transaction(async () => void order.push("last"));
    await Promise.all([first, between, last]);
    expect(order).toEqual(["first", "between", "last"]);
  });

  it("gives a long member a turn of the event loop to itself, the transaction held open between turns; quick members share one", async () => {
    const busy = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    const order: string[] = [];
    const member = (name: string, ms: number) =>
      m.uow.transaction(async () => {
        busy(ms);
        order.push(name);
        setImmediate(() => order.push(`after ${name}`));
      });
    const { units } = await counted(() => Promise.all([member("a", 6), member("b", 6), member("c", 0), member("d", 0), member("e", 6)]));
    expect(units).toBe(1);
    // a and b each spend the turn's budget: the next member waits a turn. c and d take no time: back to back in one turn.
    expect(order.slice(0, 4)).toEqual(["a", "after a", "b", "after b"]);
    expect(order.indexOf("d")).toBe(order.indexOf("c") + 1);
  });

  it("lets a Prisma write issued during a group wait its turn instead of blocking on the write lock", async () => {
    // Prisma's first query loads its client; warm it so the write below reaches the connection at once.
    await m.client.db().prisma.setting.count();
    const order: string[] = [];
    const started = Date.now();
    let written: Promise<unknown> = Promise.resolve();
    await Promise.all([
      m.uow.transaction(async () => {
        order.push("first");
        written = m.client.db().prisma.setting
          .upsert({ where: { key: "group-test" }, create: { key: "group-test", value: "1", updatedAt: new Date() }, update: { value: "2", updatedAt: new Date() } })
          .then(() => order.push("prisma"));
      }),
      m.uow.transaction(async () => {
        // Give Prisma's query every chance to reach its connection while the group is open.
        await new Promise((resolve) => setTimeout(resolve, 20));
        order.push("second");
      }),
    ]);
    await written;
    expect(order).toEqual(["first", "second", "prisma"]);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("starts a lone unit of work at once, without waiting a turn of the event loop for others", async () => {
    // Let any group ended by an earlier test stop counting as just ended.
    await new Promise((resolve) => setImmediate(resolve));
    const order: string[] = [];
    const lone = m.uow.transaction(async () => void order.push("unit of work"));
    setImmediate(() => order.push("next turn"));
    await lone;
    expect(order[0]).toBe("unit of work");
  });

  it("gathers units of work arriving right after a group ended into one group, waiting a turn for them", async () => {
    const s = await source("gathered");
    const now = Date.now();
    const ingest = (thread: string, i: number) => m.pipeline.ingestLines(s, line(thread, { type: "turn.started", turnId: `u${i}`, at: now + i }, now), now);
    const { units } = await counted(async () => {
      // Arriving together: one group.
      await Promise.all([0, 1, 2].map((i) => ingest(`g-${i}`, i)));
      // In the turn that group ended, joining is likely: the next group waits a turn, and what
      // arrives during that turn joins it.
      const gathered = [ingest("h-1", 1)];
      const nextTurn = new Promise<unknown>((resolve) => setImmediate(() => resolve(ingest("h-2", 2))));
      return Promise.all([...gathered, nextTurn]);
    });
    expect(units).toBe(2);
    expect(eventCount(s.id)).toBe(5);
  });
});

describe("commit steps", () => {
  const touched = (sourceId: string) => sql().prepare(`SELECT lastSeenAt FROM "Source" WHERE id = ?`).pluck().get(sourceId) as number | null;

  it("run once per group commit, after every member, with the inputs of the members that committed, in their order", async () => {
    const s = await source("steps");
    const log: string[] = [];
    const step: import("./unit-of-work").CommitStep<string> = {
      async run(tx, inputs) {
        log.push(`step ${inputs.join(" ")}`);
        // The step writes in the members' transaction.
        await tx.touchSource(s.id, 42);
      },
    };
    const unit = (name: string, fails = false) =>
      m.uow.transaction(async (_tx, atCommit) => {
        atCommit(step, `${name}1`);
        atCommit(step, `${name}2`);
        log.push(name);
        if (fails) throw new Error(`${name} fails`);
        return name;
      });
    const { units, value } = await counted(() => Promise.allSettled([unit("a"), unit("b", true), unit("c")]));
    expect(units).toBe(1);
    expect(value.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    // b was rolled back to its savepoint: its inputs are not the step's.
    expect(log).toEqual(["a", "b", "c", "step a1 a2 c1 c2"]);
    expect(touched(s.id)).toBe(42);
  });

  it("run for a unit of work alone, once it is done", async () => {
    const log: string[] = [];
    const step: import("./unit-of-work").CommitStep<number> = { run: async (_tx, inputs) => void log.push(`step ${inputs.join(" ")}`) };
    const other: import("./unit-of-work").CommitStep<number> = { run: async (_tx, inputs) => void log.push(`other ${inputs.join(" ")}`) };
    await m.uow.transaction(async (_tx, atCommit) => {
      atCommit(step, 1);
      atCommit(other, 2);
      atCommit(step, 3);
      log.push("work");
    });
    // Each step once, in the order each was first given an input.
    expect(log).toEqual(["work", "step 1 3", "other 2"]);
  });

  it("never run outside the transaction: one SQLite rolled back under a member that went on leaves them unrun", async () => {
    const s = await source("step-lost");
    const step: import("./unit-of-work").CommitStep<null> = { run: async (tx) => void (await tx.touchSource(s.id, 7)) };
    const lost = m.uow.transaction(async (_tx, atCommit) => {
      atCommit(step, null);
      // As SQLite does on a full disk: the transaction is gone, and this member carries on.
      sql().exec("ROLLBACK");
    });
    await expect(lost).rejects.toThrow("rolled back by SQLite before its commit steps ran");
    expect(touched(s.id)).not.toBe(7);
    expect(sql().inTransaction).toBe(false);
  });

  it("refuse an input given after its unit of work ended: it would be lost unseen", async () => {
    const step: import("./unit-of-work").CommitStep<number> = { run: async () => {} };
    let late: import("./unit-of-work").AtCommit | undefined;
    await m.uow.transaction(async (_tx, atCommit) => {
      late = atCommit;
    });
    expect(() => late!(step, 1)).toThrow("atCommit was called after its unit of work ended");
    // A unit of work's own error is not a step's.
    const own = await m.uow.transaction(async () => {
      throw new Error("its own");
    }).catch((error: unknown) => error);
    expect(m.uow.failedInCommitStep(own)).toBe(false);
  });

  it("that throws loses the commit: every member is rejected with its error and none of their writes is stored", async () => {
    const s = await source("step-fails");
    const now = Date.now();
    const step: import("./unit-of-work").CommitStep<null> = {
      run: async () => {
        throw new Error("the step fails");
      },
    };
    const results = await Promise.allSettled([
      m.pipeline.ingestLines(s, line("before", { type: "turn.started", turnId: "u1" }, now), now),
      m.uow.transaction(async (tx, atCommit) => {
        await tx.touchSource(s.id, now + 99);
        atCommit(step, null);
      }),
      m.pipeline.ingestLines(s, line("after", { type: "turn.started", turnId: "u1" }, now), now),
    ]);
    expect(results.map((result) => result.status === "rejected" && (result.reason as Error).message)).toEqual(["the step fails", "the step fails", "the step fails"]);
    // Known for what it is: no fault of the units of work it rejected (the watchdog quarantines none for it).
    expect(results.map((result) => result.status === "rejected" && m.uow.failedInCommitStep(result.reason))).toEqual([true, true, true]);
    expect(eventCount(s.id)).toBe(0);
    expect(touched(s.id)).not.toBe(now + 99);
    expect(sql().inTransaction).toBe(false);
  });
});

describe("the write lock held by another connection", () => {
  // The page renderer's connection, an import in another process: while one of them holds the
  // write lock, the thread that takes requests keeps answering, and writes wait for the lock.
  const holdWriteLock = () => {
    const other = new Database(m.client.db().path);
    other.exec("BEGIN IMMEDIATE");
    return {
      release() {
        other.exec("COMMIT");
        other.close();
      },
    };
  };
  const settledYet = (work: Promise<unknown>) => {
    const state = { settled: false };
    work.then(
      () => (state.settled = true),
      () => (state.settled = true),
    );
    return state;
  };
  const turnsOfTheLoop = async (count: number) => {
    for (let i = 0; i < count; i++) await new Promise((resolve) => setTimeout(resolve, 1));
  };

  it("a unit of work waits for it with the event loop free, then commits", async () => {
    const s = await source("locked");
    const now = Date.now();
    const lock = holdWriteLock();
    let ingested: Promise<unknown>;
    try {
      ingested = m.pipeline.ingestLines(s, line("t-locked", { type: "turn.started", turnId: "u1", at: now }, now), now);
      const state = settledYet(ingested);
      // Timers fire meanwhile: SQLite's own busy handler would have slept on this thread instead.
      await turnsOfTheLoop(20);
      expect(state.settled).toBe(false);
      expect(eventCount(s.id)).toBe(0);
    } finally {
      lock.release();
    }
    await expect(ingested).resolves.toMatchObject({ accepted: 1 });
    expect(eventCount(s.id)).toBe(1);
  });

  it("so does any other write transaction (writeTransaction)", async () => {
    const lock = holdWriteLock();
    let written: Promise<number>;
    try {
      written = m.client.writeTransaction((db) => db.prepare(`UPDATE "Source" SET lastSeenAt = lastSeenAt WHERE 0`).run().changes);
      const state = settledYet(written);
      await turnsOfTheLoop(20);
      expect(state.settled).toBe(false);
    } finally {
      lock.release();
    }
    await expect(written).resolves.toBe(0);
    // Work still to come would land outside the transaction: refused, rolled back.
    await expect(m.client.writeTransaction(async () => 1)).rejects.toThrow("synchronous work only");
    expect(sql().inTransaction).toBe(false);
  });

  it("gives up with SQLITE_BUSY once the lock stays held past the bound, the event loop free meanwhile, even on a connection's first attempt", async () => {
    // A connection of its own, never used before: its first attempt must not sleep either.
    const fresh = new Database(m.client.db().path, { timeout: 5_000 });
    const lock = holdWriteLock();
    let ticks = 0;
    const ticking = setInterval(() => ticks++, 1);
    try {
      await expect(m.client.beginImmediate(fresh, 20)).rejects.toMatchObject({ code: "SQLITE_BUSY" });
      // SQLite's busy handler would have slept through the whole bound (and past it) on this thread.
      expect(ticks).toBeGreaterThan(0);
      expect(fresh.inTransaction).toBe(false);
      expect(fresh.pragma("busy_timeout", { simple: true })).toBe(5_000);
    } finally {
      clearInterval(ticking);
      lock.release();
      fresh.close();
    }
    await expect(m.uow.transaction(async () => "after")).resolves.toBe("after");
  });
});

describe("a group that cannot even begin", () => {
  it("answers every member with the error instead of leaving them waiting (the database cannot be opened)", async () => {
    const { resetConfig } = await import("@/lib/config");
    const before = process.env.DATABASE_URL;
    await m.client.closeDatabase();
    // A path under a plain file: no directory can be made there, so the database cannot open.
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "radar-unopenable-")), "plain-file");
    fs.writeFileSync(file, "");
    process.env.DATABASE_URL = `file:${path.join(file, "radar.db")}`;
    resetConfig();
    try {
      const outcomes = await Promise.allSettled([m.uow.transaction(async () => 1), m.uow.transaction(async () => 2)]);
      expect(outcomes.map((o) => o.status)).toEqual(["rejected", "rejected"]);
    } finally {
      process.env.DATABASE_URL = before;
      resetConfig();
    }
    // The queue goes on: the next unit of work, on a database that opens, commits.
    await expect(m.uow.transaction(async () => "after")).resolves.toBe("after");
  });
});
