import { closeDatabase, db } from "./client";
import * as postgres from "./postgres/open-store";
import { onEitherStore } from "./store";

/**
 * Opening the store DATABASE_URL names, at start (the server's boot, the preflight of `npm
 * start`): its schema migrated, so a store that cannot serve stops the start with one clear line
 * rather than failing the first request. Closing it ends its connections (a tool, a test).
 */
const sqlite = {
  async openStore(): Promise<void> {
    db();
  },
  closeStore: closeDatabase,
};

export const { openStore, closeStore } = onEitherStore(sqlite, postgres);
