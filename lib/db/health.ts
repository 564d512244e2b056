import { db, serialized } from "./client";
import * as postgres from "./postgres/health";
import { statement } from "./statement";
import type { DatabaseHealth } from "./records/health";
import { onEitherStore } from "./store";

export type { DatabaseHealth } from "./records/health";


const sqlite = {
  databaseHealth(): Promise<DatabaseHealth> {
    return serialized(health);
  },
};

function health(): DatabaseHealth {
  try {
    const { sql, path } = db();
    const row = statement(`SELECT sqlite_version() AS version, (SELECT count(*) FROM "_radar_migrations") AS migrations`, sql).get() as {
      version: string;
      migrations: number;
    };
    const journalMode = sql.pragma("journal_mode", { simple: true }) as string;
    return { ok: true, path, journalMode, migrations: row.migrations, sqliteVersion: row.version };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}

export const { databaseHealth } = onEitherStore(sqlite, postgres);
