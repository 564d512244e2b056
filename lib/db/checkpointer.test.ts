import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PATIENCE_MS } from "@/e2e/support/patience";
import { waitFor } from "@/e2e/support/relay-helpers";
import { useFreshDatabase } from "@/e2e/support/in-process";
import { checkpointWal, closeCheckpointer, startOverStep, copyStep, openCheckpointer, runCheckpointer, START_OVER_FRAMES, startOver, WAL_SIZE_LIMIT_BYTES, type Checkpointer, type CheckpointerMessage } from "./checkpointer";

/**
 * Who copies the WAL back into the database file: by default the commit that takes the WAL past
 * 1,000 pages, on the thread that committed (the ingest thread); while the checkpointer thread
 * runs (checkpointer.ts), it does, every connection of this process checkpointing only far past
 * that (a backstop); commits append to the WAL rather than start it over (each start syncs the
 * WAL's header on the committing thread), until it holds START_OVER_FRAMES; then it starts over,
 * whatever commits land during the copies.
 */
useFreshDatabase("checkpointer");

let client: typeof import("./client");
let other: Checkpointer;
beforeAll(async () => {
  client = await import("./client");
  client.db().sql.exec(`CREATE TABLE "ballast" (body BLOB)`);
  other = openCheckpointer(client.db().path);
});
afterAll(() => {
  client.checkpointsByThread(null);
  if (other) closeCheckpointer(other);
  // These tests leave some 300 MB of pages: the directory useFreshDatabase made goes with them.
  fs.rmSync(path.dirname(client.db().path), { recursive: true, force: true });
});

/** About `pages` pages of new rows in one commit on the server's connection (by default past SQLite's 1,000). */
function commitPages(pages = 2_000): void {
  const insert = client.db().sql.prepare(`INSERT INTO "ballast" (body) VALUES (randomblob(4000))`);
  client.db().sql.transaction(() => {
    for (let i = 0; i < pages; i++) insert.run();
  })();
}

/** Frames in the WAL now (a PASSIVE checkpoint that copies nothing new says). */
const walFrames = () => (other.sql.pragma("wal_checkpoint(PASSIVE)") as { log: number }[])[0].log;
/** Which start of the WAL this is: the salts in its header (bytes 16–23), new at every start. */
function walStart(): string {
  const header = Buffer.alloc(24);
  const fd = fs.openSync(`${client.db().path}-wal`, "r");
  try {
    fs.readSync(fd, header, 0, 24, 0);
  } finally {
    fs.closeSync(fd);
  }
  return header.subarray(16, 24).toString("hex");
}

const fileSize = () => fs.statSync(client.db().path).size;
const prismaAutocheckpoint = async () => Number((await client.db().prisma.$queryRawUnsafe<{ wal_autocheckpoint: bigint }[]>("PRAGMA wal_autocheckpoint"))[0].wal_autocheckpoint);

describe("WAL checkpoints", () => {
  it("by default, the commit that takes the WAL past 1,000 pages copies it into the file, on its own thread", () => {
    const before = fileSize();
    commitPages();
    expect(fileSize()).toBeGreaterThan(before + 4_000_000);
  });

  it("while the checkpointer thread runs, no commit of this process does (short of a backstop far past it): the checkpointer copies it", async () => {
    client.checkpointsByThread(client.db().path);
    expect(client.db().sql.pragma("wal_autocheckpoint", { simple: true })).toBe(client.BACKSTOP_PAGES);
    expect(await prismaAutocheckpoint()).toBe(client.BACKSTOP_PAGES);
    const before = fileSize();
    commitPages();
    expect(fileSize()).toBe(before);
    const done = checkpointWal(other);
    expect(done.copied).toBe(done.walFrames);
    expect(done.walFrames).toBeGreaterThan(1_000);
    expect(fileSize()).toBeGreaterThan(before + 4_000_000);
  });

  it("once it stops, commits checkpoint again, on every connection", async () => {
    client.checkpointsByThread(client.db().path);
    client.checkpointsByThread(null);
    expect(client.db().sql.pragma("wal_autocheckpoint", { simple: true })).toBe(1_000);
    expect(await prismaAutocheckpoint()).toBe(1_000);
    expect(client.walCheckpoints()).toEqual({ byThread: false, walFrames: null, framesLeft: null });
  });

  it("a connection opened to the file while the checkpointer runs leaves checkpoints to it; one to another file does not", () => {
    client.checkpointsByThread(client.db().path);
    const again = client.openDatabase(client.db().path);
    const elsewhere = client.openDatabase(`${client.db().path}.other`);
    try {
      expect(again.sql.pragma("wal_autocheckpoint", { simple: true })).toBe(client.BACKSTOP_PAGES);
      expect(elsewhere.sql.pragma("wal_autocheckpoint", { simple: true })).toBe(1_000);
    } finally {
      again.sql.close();
      elsewhere.sql.close();
      client.checkpointsByThread(null);
    }
  });

  it("a checkpoint that a reader's snapshot holds back copies what it can, and says how much is left", () => {
    client.checkpointsByThread(client.db().path);
    try {
      checkpointWal(other);
      // A reader in the middle of a read transaction keeps the WAL from being restarted.
      const reader = new Database(client.db().path, { readonly: true });
      reader.exec("BEGIN");
      reader.prepare(`SELECT count(*) FROM "ballast"`).get();
      commitPages();
      const held = checkpointWal(other);
      expect(held.walFrames).toBeGreaterThan(held.copied);
      reader.exec("COMMIT");
      reader.close();
      const freed = checkpointWal(other);
      expect(freed.copied).toBe(freed.walFrames);
    } finally {
      client.checkpointsByThread(null);
    }
  });

  it("the commit that starts the WAL over keeps the database's user_version, and cuts a WAL that readers let grow back to 64 MiB", () => {
    client.checkpointsByThread(client.db().path);
    try {
      checkpointWal(other);
      client.db().sql.pragma("user_version = 42");
      const reader = new Database(client.db().path, { readonly: true });
      try {
        reader.exec("BEGIN");
        reader.prepare(`SELECT count(*) FROM "ballast"`).get();
        commitPages(17_000);
        checkpointWal(other);
      } finally {
        reader.exec("COMMIT");
        reader.close();
      }
      const walFile = `${client.db().path}-wal`;
      expect(fs.statSync(walFile).size).toBeGreaterThan(WAL_SIZE_LIMIT_BYTES);
      const before = walStart();
      checkpointWal(other);
      expect(walStart()).not.toBe(before);
      expect(fs.statSync(walFile).size).toBeLessThanOrEqual(WAL_SIZE_LIMIT_BYTES);
      expect(client.db().sql.pragma("user_version", { simple: true })).toBe(42);
    } finally {
      client.checkpointsByThread(null);
    }
  });

  it("a snapshot that cannot be taken this moment (SQLITE_BUSY) leaves the round a copy alone, not an error", () => {
    const busy = Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY_RECOVERY" });
    const refusing = { inTransaction: false, exec: () => { throw busy; }, prepare: () => { throw busy; } } as unknown as Database.Database;
    commitPages(10);
    const row = copyStep({ sql: other.sql, snapshot: refusing });
    expect(row.checkpointed).toBe(row.log);
  });

  it("commits append to the WAL instead of starting it over, though every round copies every frame, until it holds START_OVER_FRAMES: then the checkpointer starts it over", () => {
    client.checkpointsByThread(client.db().path);
    try {
      checkpointWal(other);
      commitPages(10);
      // What a copy alone does, the checkpointer's snapshot let go: the next commit finds every
      // frame copied and starts over.
      if (other.snapshot.inTransaction) other.snapshot.exec("COMMIT");
      other.sql.pragma("wal_checkpoint(PASSIVE)");
      const before = walStart();
      commitPages(10);
      expect(walStart()).not.toBe(before);

      const start = walStart();
      let frames = 0;
      while (frames + 200 < START_OVER_FRAMES) {
        commitPages(200);
        const round = checkpointWal(other);
        expect(round.copied).toBe(round.walFrames);
        expect(round.walFrames).toBeGreaterThan(frames);
        frames = round.walFrames;
      }
      // A quiet round changes nothing: the snapshot it keeps still holds the WAL.
      checkpointWal(other);
      commitPages(10);
      expect(walStart()).toBe(start);

      // Past it, the round starts the WAL over with a commit of its own (one page): that commit,
      // not the server's next, syncs the WAL's header.
      commitPages(300);
      expect(checkpointWal(other).walFrames).toBe(1);
      const startedOver = walStart();
      expect(startedOver).not.toBe(start);
      expect(checkpointWal(other).walFrames).toBe(1);
      commitPages(10);
      expect(walStart()).toBe(startedOver);
      expect(checkpointWal(other).walFrames).toBeGreaterThan(10);
    } finally {
      client.checkpointsByThread(null);
    }
  });

  it("a writer that took the lock first starts the WAL over itself: the checkpointer's commit gives way, without an error", () => {
    const writer = client.db().sql;
    writer.exec("BEGIN IMMEDIATE");
    try {
      expect(startOver(other)).toBe(false);
    } finally {
      writer.exec("ROLLBACK");
    }
  });

  it("under steady ingestion, a commit in every round, the WAL grows without the second step and starts over with it", () => {
    client.checkpointsByThread(client.db().path);
    try {
      checkpointWal(other);
      commitPages(10);
      // A commit that began before the copy and lands during it: the WAL is never all copied
      // when the next one begins.
      const writer = client.db().sql;
      const insert = writer.prepare(`INSERT INTO "ballast" (body) VALUES (randomblob(4000))`);
      const roundWithCommitDuring = (secondStep: boolean) => {
        writer.exec("BEGIN IMMEDIATE");
        for (let i = 0; i < 300; i++) insert.run();
        const copied = copyStep(other);
        writer.exec("COMMIT");
        if (secondStep) startOverStep(other, copied);
      };
      const rounds = Math.ceil((START_OVER_FRAMES + 3_000) / 300);
      for (let round = 0; round < rounds; round++) roundWithCommitDuring(false);
      expect(walFrames()).toBeGreaterThan(START_OVER_FRAMES + 2_000);
      for (let round = 0; round < rounds; round++) roundWithCommitDuring(true);
      expect(walFrames()).toBeLessThan(START_OVER_FRAMES + 700);
    } finally {
      client.checkpointsByThread(null);
    }
  });

  it("past START_OVER_FRAMES, a writer that holds the lock leaves the start to the next round: the checkpointer never waits for one", () => {
    client.checkpointsByThread(client.db().path);
    try {
      commitPages(START_OVER_FRAMES + 100);
      const before = walStart();
      const writer = client.db().sql;
      const copied = copyStep(other);
      writer.exec("BEGIN IMMEDIATE");
      try {
        const started = performance.now();
        const row = startOverStep(other, copied, 50);
        expect(row.checkpointed).toBe(row.log);
        expect(walStart()).toBe(before);
        // No busy wait: it gave up after its 50 ms of tries (5 s, the server's timeout, would be a wait).
        expect(performance.now() - started).toBeLessThan(2_500);
      } finally {
        writer.exec("ROLLBACK");
      }
      const round = checkpointWal(other);
      expect(walStart()).not.toBe(before);
      expect(round.walFrames).toBeLessThan(100);
    } finally {
      client.checkpointsByThread(null);
    }
  });

  it("past START_OVER_FRAMES, a reader's snapshot keeps the WAL from starting over until it lets go", () => {
    client.checkpointsByThread(client.db().path);
    try {
      commitPages(START_OVER_FRAMES + 100);
      const before = walStart();
      const reader = new Database(client.db().path, { readonly: true });
      try {
        reader.exec("BEGIN");
        reader.prepare(`SELECT count(*) FROM "ballast"`).get();
        const held = checkpointWal(other);
        expect(walStart()).toBe(before);
        expect(held.walFrames).toBeGreaterThanOrEqual(START_OVER_FRAMES);
      } finally {
        reader.exec("COMMIT");
        reader.close();
      }
      const round = checkpointWal(other);
      expect(walStart()).not.toBe(before);
      expect(round.walFrames).toBeLessThan(100);
    } finally {
      client.checkpointsByThread(null);
    }
  });

  it("the checkpointer's work: ready once its connection is open, then a checkpoint each round, copying every page a commit left", async () => {
    client.checkpointsByThread(client.db().path);
    const messages: CheckpointerMessage[] = [];
    const stop = runCheckpointer(client.db().path, 10, { postMessage: (message) => messages.push(message) });
    try {
      expect(messages[0]).toEqual({ ready: true });
      commitPages();
      const copied = await waitFor(
        () => messages.find((m): m is Extract<CheckpointerMessage, { checkpoint: unknown }> => "checkpoint" in m && m.checkpoint.copied > 1_000),
        PATIENCE_MS,
        () => `no checkpoint copied the pages: ${JSON.stringify(messages.slice(-3))}`,
        5,
      );
      expect(copied.checkpoint.copied).toBe(copied.checkpoint.walFrames);
    } finally {
      stop();
      client.checkpointsByThread(null);
    }
  });
});
