import { describe, expect, it } from "vitest";
import { STORES, useStore } from "@/e2e/support/both-stores";
import { databaseHealth } from "./health";
import { migrationsDir, readMigrations } from "./migrate";
import { postgresMigrationsDir } from "./postgres/migrate";
import { isStorageFull } from "./storage-full";

describe.each(STORES)("database health on %s", (store) => {
  useStore(store);

  it("answers ok with every migration applied", async () => {
    const health = await databaseHealth();
    const applied = readMigrations(store === "sqlite" ? migrationsDir() : postgresMigrationsDir()).length;
    expect(health).toMatchObject({ ok: true, migrations: applied });
    expect(health[store === "sqlite" ? "sqliteVersion" : "postgresVersion"]).toMatch(/^\d+\.\d+/);
  });
});

describe("a full disk", () => {
  it("is recognised from either store's error", () => {
    expect(isStorageFull(Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" }))).toBe(true);
    expect(isStorageFull(Object.assign(new Error("could not extend file"), { code: "53100" }))).toBe(true);
    expect(isStorageFull(Object.assign(new Error("busy"), { code: "SQLITE_BUSY" }))).toBe(false);
    expect(isStorageFull(null)).toBe(false);
  });
});
