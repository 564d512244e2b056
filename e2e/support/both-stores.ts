import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, inject } from "vitest";
import { resetConfig } from "@/lib/config";
import { freshDatabase } from "./postgres";

/**
 * A lib/db contract test runs its cases once per store: `describe.each(STORES)`, then
 * `useStore(store)` first in the block. SQLite gets a temporary file, PostgreSQL a fresh, migrated
 * database in the run's cluster; DATABASE_URL names it while the block runs (lib/db/store.ts reads
 * it on every call), and everything is closed and removed after.
 */
export const STORES = ["sqlite", "postgres"] as const;
export type TestStore = (typeof STORES)[number];

export function useStore(store: TestStore): void {
  let dir = "";
  beforeAll(async () => {
    if (store === "sqlite") {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "radar-contract-"));
      process.env.DATABASE_URL = `file:${path.join(dir, "radar.db")}`;
    } else {
      const url = await freshDatabase(inject("postgresUrl"), "contract");
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { migratePostgres } = await import("@/lib/db/postgres/migrate");
        await migratePostgres(client);
      } finally {
        await client.end();
      }
      process.env.DATABASE_URL = url;
    }
    resetConfig();
  });
  afterAll(async () => {
    if (store === "sqlite") {
      const { closeDatabase } = await import("@/lib/db/client");
      await closeDatabase();
      fs.rmSync(dir, { recursive: true, force: true });
    } else {
      const { closePool } = await import("@/lib/db/postgres/pool");
      const { closePostgresPrisma } = await import("@/lib/db/postgres/client");
      await Promise.all([closePool(), closePostgresPrisma()]);
    }
  });
}

