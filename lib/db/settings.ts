import { serialized } from "./client";
import * as postgres from "./postgres/settings";
import { statement } from "./statement";
import { onEitherStore } from "./store";

/** Server-wide secrets and one-time values, shared by every instance and kept across restarts. */
const sqlite = {
  /** The stored value, or `make()` stored now when there is none (the first caller's value wins). */
  settingOrCreate(key: string, make: () => string, now = Date.now()): Promise<string> {
    return serialized(() => {
      statement(`INSERT INTO "Setting" (key, value, updatedAt) VALUES (?, ?, ?) ON CONFLICT(key) DO NOTHING`).run(key, make(), now);
      return (statement(`SELECT value FROM "Setting" WHERE key = ?`).get(key) as { value: string }).value;
    });
  },

  readSetting(key: string): Promise<string | null> {
    return serialized(() => (statement(`SELECT value FROM "Setting" WHERE key = ?`).get(key) as { value: string } | undefined)?.value ?? null);
  },

  writeSetting(key: string, value: string, now = Date.now()): Promise<void> {
    return serialized(() => {
      statement(`INSERT INTO "Setting" (key, value, updatedAt) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updatedAt = excluded.updatedAt`).run(key, value, now);
    });
  },

  /** Removes a one-time value; true when this caller removed it (so only one caller can use it). */
  takeSetting(key: string, value: string): Promise<boolean> {
    return serialized(() => statement(`DELETE FROM "Setting" WHERE key = ? AND value = ?`).run(key, value).changes === 1);
  },

  /** Removes a value whatever it is; true when there was one. */
  deleteSetting(key: string): Promise<boolean> {
    return serialized(() => statement(`DELETE FROM "Setting" WHERE key = ?`).run(key).changes === 1);
  },
};

export const { settingOrCreate, readSetting, writeSetting, takeSetting, deleteSetting } = onEitherStore(sqlite, postgres);
