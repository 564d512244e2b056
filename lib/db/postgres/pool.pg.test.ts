import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { freshDatabase } from "@/scripts/lib/postgres";
import { closePool, inTransaction, pool } from "./pool";
import { msFromTimestamp, timestampFromMs } from "./time";

let url = "";
beforeAll(async () => {
  url = await freshDatabase(inject("postgresUrl"), "pool");
});
afterAll(() => closePool());

describe("the PostgreSQL pool", () => {
  it("is one per process and URL", () => {
    expect(pool(url)).toBe(pool(url));
    expect(() => pool("file:./radar.db")).toThrow(/postgres:\/\//);
  });

  it("answers counts and epoch ms as numbers, and refuses a BIGINT a number cannot hold", async () => {
    const at = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
    const { rows } = await pool(url).query(`SELECT count(*) AS n, ${msFromTimestamp(timestampFromMs("$1"))} AS at`, [at]);
    expect(rows[0]).toEqual({ n: 1, at });
    await expect(pool(url).query(`SELECT (2^60)::bigint AS big`)).rejects.toThrow(/does not fit/);
    // Only this pool parses so: any other pg client keeps pg's text.
    expect(pg.types.getTypeParser(20)("12")).toBe("12");
  });

  it("commits a transaction's statements together, or none of them", async () => {
    process.env.DATABASE_URL = url;
    const { resetConfig } = await import("@/lib/config");
    resetConfig();
    await pool().query(`CREATE TABLE IF NOT EXISTS pool_test (n int)`);
    await expect(inTransaction(async (client) => {
      await client.query(`INSERT INTO pool_test VALUES (1)`);
      throw new Error("no");
    })).rejects.toThrow("no");
    await inTransaction(async (client) => client.query(`INSERT INTO pool_test VALUES (2)`));
    expect((await pool().query(`SELECT array_agg(n) AS ns FROM pool_test`)).rows[0].ns).toEqual([2]);
    await pool().query(`DROP TABLE pool_test`);
  });
});
