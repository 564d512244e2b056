import { inject } from "vitest";

/** vitest setup file of the `postgres-e2e` project: startServer (e2e/support/server.ts) makes each server's database in the run's cluster. */
process.env.RADAR_E2E_STORE = "postgres";
process.env.RADAR_E2E_POSTGRES_URL = inject("postgresUrl");
