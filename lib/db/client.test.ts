import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useFreshDatabase } from "@/e2e/support/in-process";

/**
 * A second thread (the page renderer) writes the same file on a connection of its own, so every
 * write transaction takes the write lock when it begins: one that read first and then found
 * another connection's commit in between could never write (SQLITE_BUSY, whatever the timeout).
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
  // A unit of work's GROUP BYs and IN lists, and a group member's statement journal, would each
  // set up a temporary file otherwise (client.ts): 2 is MEMORY, 0 SQLite's default.
  it("stay in memory on the writer, not on a read-only connection", () => {
    expect(client.db().sql.pragma("temp_store", { simple: true })).toBe(2);
    const reader = new Database(client.db().path, { readonly: true });
    try {
      expect(reader.pragma("temp_store", { simple: true })).toBe(0);
    } finally {
      reader.close();
    }
  });
});
