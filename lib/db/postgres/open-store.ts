import pg from "pg";
import { config } from "../../config";
import { postgresAddress, postgresProblem } from "../config";
import { closePostgresPrisma } from "./client";
import { CLIENT_KEEPALIVE, closeQuietly, DEAD_PEER_SETTINGS } from "./dedicated";
import { DATABASE_LOCKS } from "./locks";
import { migratePostgres } from "./migrate";
import { closePool } from "./pool";

/**
 * How long reaching the server may take at start before the start gives up with a clear line. It
 * only stops a start that hangs (a refused connection or login fails at once): several instances
 * starting together on a busy machine took more than 10 s to be let in.
 */
const CONNECT_TIMEOUT_MS = 30_000;

/**
 * lib/db/open-store.ts on PostgreSQL: one connection of its own proves the server answers and
 * takes the login, then applies the migrations (migratePostgres takes turns with any instance
 * starting at the same moment). Every later query uses the pool.
 */
export async function openStore(): Promise<void> {
  // A migration's failure on a sound connection (a privilege it lacks) is the setting's to explain too.
  await onOwnConnection((client) => migratePostgres(client), { workFailuresAreTheSetting: true });
}

const START_LOCK = DATABASE_LOCKS.start;

/**
 * lib/db/open-store.ts's startTurn on PostgreSQL: a session advisory lock on a connection of its
 * own, so instances starting together seed the first source and admin one after another, and a
 * start that dies mid-way releases it with its connection.
 */
export async function startTurn<T>(work: () => Promise<T>): Promise<T> {
  return onOwnConnection(async (client) => {
    // The lock lives as long as this session: a host that vanishes while seeding must not keep it
    // for hours of TCP timeouts (the leader's connection has the same settings).
    await client.query(DEAD_PEER_SETTINGS);
    // Seeding takes milliseconds: a turn not had in a minute means an instance hangs while seeding,
    // and this start stops with that line rather than waiting for ever.
    await client.query("SET lock_timeout = '60s'");
    await client.query("SELECT pg_advisory_lock($1)", [START_LOCK]).catch((error: Error & { code?: string }) => {
      // 55P03: lock_not_available, what lock_timeout raises.
      throw error.code === "55P03" ? new Error("another instance has been seeding this database for a minute; is it hung?") : error;
    });
    try {
      return await work();
    } finally {
      // Closing the connection (onOwnConnection) lets go all the same; a failed unlock must not
      // hide what the work threw.
      await client.query("SELECT pg_advisory_unlock($1)", [START_LOCK]).catch(() => undefined);
    }
  }, { workFailuresAreTheSetting: false });
}

/**
 * Runs `work` on a connection of its own. A refused login or an unreachable host is the setting's
 * to explain (postgresProblem: one line naming host, port and database, never the password); so
 * is a database error of the work when `workFailuresAreTheSetting`. An edited migration, say, is
 * the repository's to explain (its message names it), and a seeding's failure its own.
 */
async function onOwnConnection<T>(work: (client: pg.Client) => Promise<T>, options: { workFailuresAreTheSetting: boolean }): Promise<T> {
  const url = config().DATABASE_URL;
  // A URL that does not parse is refused before pg repeats it (password included) in its error.
  postgresAddress(url);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, ...CLIENT_KEEPALIVE });
  // A connection dropped mid-way surfaces as the query's error, not as an unhandled event.
  client.on("error", () => undefined);
  const settingsProblem = (error: unknown) => (error as { code?: unknown }).code !== undefined || /timeout/i.test((error as Error).message);
  try {
    try {
      await client.connect();
    } catch (error) {
      throw settingsProblem(error) ? postgresProblem(url, error) : error;
    }
    try {
      return await work(client);
    } catch (error) {
      throw options.workFailuresAreTheSetting && settingsProblem(error) ? postgresProblem(url, error) : error;
    }
  } finally {
    await closeQuietly(client);
  }
}

export async function closeStore(): Promise<void> {
  await Promise.all([closePostgresPrisma(), closePool()]);
}
