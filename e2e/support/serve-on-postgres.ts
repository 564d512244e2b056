// Playwright's web server on PostgreSQL (e2e/playwright.config.ts, when RADAR_E2E_STORE=postgres):
// a throwaway cluster (postgres.ts), then the built app given as the argument on a database in
// it. The cluster goes when the app ends or this process is stopped, even by kill -9.
import { spawn } from "node:child_process";
import { startPostgres } from "../../scripts/lib/postgres";

const [entry] = process.argv.slice(2);
if (!entry) throw new Error("usage: tsx e2e/support/serve-on-postgres.ts <the built server's entry>");
const cluster = await startPostgres("radar");
const server = spawn(process.execPath, [entry], { stdio: "inherit", env: { ...process.env, DATABASE_URL: cluster.url } });
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.kill(signal));
server.on("exit", (code, signal) => {
  cluster.stop();
  process.exit(code ?? (signal ? 1 : 0));
});
