import type { TestProject } from "vitest/node";
import { startPostgres, type TestPostgres } from "../../scripts/lib/postgres";

/**
 * The run's one cluster, shared by every project that names this global setup (postgres and
 * postgres-e2e): each project loads the file on its own, so the handle lives on globalThis of the
 * main process, and the last project to finish stops it.
 */
const shared = globalThis as unknown as { __radarTestCluster?: { cluster: Promise<TestPostgres>; users: number } };

/** vitest global setup of the PostgreSQL suites: one throwaway cluster for the run, stopped after it. */
export default async function setup(project: TestProject) {
  shared.__radarTestCluster ??= { cluster: startPostgres(), users: 0 };
  const entry = shared.__radarTestCluster;
  entry.users += 1;
  const cluster = await entry.cluster;
  project.provide("postgresUrl", cluster.url);
  return async () => {
    entry.users -= 1;
    if (entry.users > 0) return;
    shared.__radarTestCluster = undefined;
    await cluster.stop();
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    /** The throwaway cluster's database; suites make their own with freshDatabase(). */
    postgresUrl: string;
  }
}
