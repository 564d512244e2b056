import type { TestProject } from "vitest/node";
import { startPostgres } from "../../scripts/lib/postgres";

/** vitest global setup of the PostgreSQL suites: one throwaway cluster for the run, stopped after it. */
export default async function setup(project: TestProject) {
  const cluster = await startPostgres();
  project.provide("postgresUrl", cluster.url);
  return () => cluster.stop();
}

declare module "vitest" {
  export interface ProvidedContext {
    /** The throwaway cluster's database; suites make their own with freshDatabase(). */
    postgresUrl: string;
  }
}
