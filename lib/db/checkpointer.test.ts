import fs from "node:fs";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PATIENCE_MS } from "@/e2e/support/patience";
import { waitFor } from "@/e2e/support/relay-helpers";
import { useFreshDatabase } from "@/e2e/support/in-process";
import { checkpointWal, runCheckpointer, type CheckpointerMessage } from "./checkpointer";

/**
 * Who copies the WAL back into the database file: by default the commit that takes the WAL past
 * 1,000 pages, on the thread that committed (the ingest thread); while the checkpointer thread
 * runs (checkpointer.ts), only it, and every connection of this process leaves it to it.
 */
useFreshDatabase("checkpointer");

let client: typeof import("./client");
let other: Database.Database;
beforeAll(async () => {
  client = await import("./client");
  client.db().sql.exec(`CREATE TABLE "ballast" (body BLOB)`);
  other = new Database(client.db().path);
});
afterAll(() => {
  client.checkpointsByThread(null);
  other?.close();
});

/** About 2,000 pages of new rows in one commit on the server's connection: past SQLite's 1,000. */
function commitPages(): void {
  const insert = client.db().sql.prepare(`INSERT INTO "ballast" (body) VALUES (randomblob(4000))`);
  client.db().sql.transaction(() => {
    for (let i = 0; i < 2_000; i++) insert.run();
  })();
}

const fileSize = () => fs.statSync(client.db().path).size;
const prismaAutocheckpoint = async () => Number((await client.db().prisma.$queryRawUnsafe<{ wal_autocheckpoint: bigint }[]>("PRAGMA wal_autocheckpoint"))[0].wal_autocheckpoint);

describe("WAL checkpoints", () => {
  it("by default, the commit that takes the WAL past 1,000 pages copies it into the file, on its own thread", () => {
    const before = fileSize();
    commitPages();
    expect(fileSize()).toBeGreaterThan(before + 4_000_000);
  });

  it("while the checkpointer thread runs, no commit of this process does: the checkpointer copies it", async () => {
    client.checkpointsByThread(client.db().path);
    expect(client.db().sql.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
    expect(await prismaAutocheckpoint()).toBe(0);
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
    expect(client.walCheckpoints()).toEqual({ byThread: false, framesLeft: null });
  });

  it("a connection opened to the file while the checkpointer runs leaves checkpoints to it; one to another file does not", () => {
    client.checkpointsByThread(client.db().path);
    const again = client.openDatabase(client.db().path);
    const elsewhere = client.openDatabase(`${client.db().path}.other`);
    try {
      expect(again.sql.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
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
