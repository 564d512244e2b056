import { freshDatabase, startPostgres, type TestPostgres } from "../../scripts/lib/postgres";

/**
 * The store the end-to-end suites run their servers on: SQLite unless RADAR_E2E_STORE=postgres,
 * which vitest's `postgres-e2e` project and the PostgreSQL Playwright run set. Each server gets a
 * fresh database in the run's throwaway cluster (RADAR_E2E_POSTGRES_URL, from postgres-setup.ts),
 * or, where no run made one (a Playwright spec that starts its own server), in a cluster this
 * process starts on first use and stops when it exits.
 */
export type E2eStore = "sqlite" | "postgres";

export function e2eStore(): E2eStore {
  const store = process.env.RADAR_E2E_STORE ?? "sqlite";
  if (store !== "sqlite" && store !== "postgres") throw new Error(`RADAR_E2E_STORE must be sqlite or postgres, got "${store}"`);
  return store;
}

let ownCluster: Promise<TestPostgres> | null = null;

/** A new, empty database in the run's cluster, for one server. */
export async function freshE2eDatabase(): Promise<string> {
  const cluster = process.env.RADAR_E2E_POSTGRES_URL ?? (await (ownCluster ??= startPostgres())).url;
  return freshDatabase(cluster, "e2e");
}
