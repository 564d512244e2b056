import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/e2e/support/in-process";

/**
 * Other processes (the CLI's `npm run users`, `npm run keys`) write the same file on connections
 * of their own, so every write transaction takes the write lock when it begins: one that read
 * first and then found another connection's commit in between could never write (SQLITE_BUSY,
 * whatever the timeout).
 */
useFreshDatabase("client");

let client: typeof import("./client");
let other: Database.Database;
beforeAll(async () => {
  client = await import("./client");
  other = new Database(client.db().path, { timeout: 0 });
});
afterAll(() => other?.close());

/** Whether another connection could take the write lock right now. */
function otherCanWrite(): boolean {
  try {
    other.exec("BEGIN IMMEDIATE");
    other.exec("ROLLBACK");
    return true;
  } catch (error) {
    expect((error as { code?: string }).code).toMatch(/^SQLITE_BUSY/);
    return false;
  }
}

describe("write transactions take the write lock as they begin", () => {
  it("Prisma's transactions, before their first write", async () => {
    expect(otherCanWrite()).toBe(true);
    const held = await client.db().prisma.$transaction(async (tx) => {
      await tx.source.findFirst();
      return otherCanWrite();
    });
    expect(held).toBe(false);
    expect(otherCanWrite()).toBe(true);
  });
});

describe("the writer's temporary b-trees", () => {
  // In memory for a unit of work's small queries, on disk for the rebuild over all history
  // (client.ts, withTempOnDisk). temp_store: 2 is MEMORY, 1 FILE.
  const tempStore = () => client.db().sql.pragma("temp_store", { simple: true });

  it("stay in memory on the writer's connection", () => {
    expect(tempStore()).toBe(2);
  });

  it("go to disk for the rollups' rebuild, and back to memory after it", async () => {
    const sql = client.db().sql;
    const exec = sql.exec.bind(sql);
    const during: unknown[] = [];
    sql.exec = (text: string) => {
      during.push(tempStore());
      return exec(text);
    };
    try {
      await (await import("./rollups")).rebuildAllRollups();
    } finally {
      sql.exec = exec;
    }
    expect(during.length).toBeGreaterThan(0);
    expect(new Set(during)).toEqual(new Set([1]));
    expect(tempStore()).toBe(2);
  });

  it("come back to memory when the work on disk throws", () => {
    expect(() =>
      client.withTempOnDisk(client.db().sql, () => {
        expect(tempStore()).toBe(1);
        throw new Error("failed on disk");
      }),
    ).toThrow("failed on disk");
    expect(tempStore()).toBe(2);
  });
});
