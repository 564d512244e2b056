import { freshDatabase } from "./postgres";

/**
 * The store the end-to-end suites run their servers on: SQLite unless RADAR_E2E_STORE=postgres,
 * which vitest's `postgres-e2e` project and the PostgreSQL Playwright run set, together with
 * RADAR_E2E_POSTGRES_URL, a database in the run's throwaway cluster (postgres-setup.ts) beside
 * which each server gets a fresh one.
 */
export type E2eStore = "sqlite" | "postgres";

export function e2eStore(): E2eStore {
  const store = process.env.RADAR_E2E_STORE ?? "sqlite";
  if (store !== "sqlite" && store !== "postgres") throw new Error(`RADAR_E2E_STORE must be sqlite or postgres, got "${store}"`);
  return store;
}

/** A new, empty database in the run's cluster, for one server. */
export function freshE2eDatabase(): Promise<string> {
  const cluster = process.env.RADAR_E2E_POSTGRES_URL;
  if (!cluster) throw new Error("RADAR_E2E_STORE=postgres needs RADAR_E2E_POSTGRES_URL (the run's cluster, set by e2e/support/postgres-setup.ts)");
  return freshDatabase(cluster, "e2e");
}
