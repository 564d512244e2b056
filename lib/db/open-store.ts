import { closeDatabase, db } from "./client";
import * as postgres from "./postgres/open-store";
import { processQueue } from "./queue";
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
  // One process serves a SQLite file, so its turns are taken within the process.
  startTurn: <T>(work: () => Promise<T>): Promise<T> => sqliteTurns.run(work),
};

const sqliteTurns = processQueue("sqliteStartTurns");

/**
 * `startTurn(work)`: what a start does once for the whole store (the first source, the first
 * admin), done by one starting instance at a time, so instances starting together on one
 * PostgreSQL database do not both create it.
 */
export const { openStore, closeStore, startTurn } = onEitherStore(sqlite, postgres);
