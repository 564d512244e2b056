import fs from "node:fs";
import Database from "better-sqlite3";
import pg from "pg";
import { startPostgres, freshDatabase } from "../e2e/support/postgres";
import { resetConfig } from "../lib/config";
import { parseInsightsQuery } from "../lib/insights/range";
import { migratePostgres } from "../lib/db/postgres/migrate";
import { copyTables } from "../lib/db/postgres/migrate-store";
import { benchDatabase, INSIGHTS_VIEWS } from "./bench-insights";

const cluster = await startPostgres();
try {
  let t = performance.now();
  const built = fs.existsSync("/tmp/wt-move-bench.db") ? { file: "/tmp/wt-move-bench.db", now: Number(fs.readFileSync("/tmp/wt-move-bench.now", "utf8")) } : benchDatabase();
  console.log("built sqlite", ((performance.now() - t) / 1000).toFixed(1), "s", built.file);
  if (built.file !== "/tmp/wt-move-bench.db") fs.copyFileSync(built.file, "/tmp/wt-move-bench.db");
  fs.writeFileSync("/tmp/wt-move-bench.now", String(built.now));
  const url = await freshDatabase(cluster.url, "r");
  t = performance.now();
  const sqlite = new Database(built.file, { readonly: true });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await migratePostgres(client);
  await copyTables(sqlite, client);
  await client.query("ANALYZE");
  await client.end();
  console.log("moved", ((performance.now() - t) / 1000).toFixed(1), "s");
  process.env.DATABASE_URL = url;
  resetConfig();
  const { insights } = await import("../lib/db/insights");
  const { metricsSnapshot } = await import("../lib/db/metrics");
  for (const view of INSIGHTS_VIEWS) {
    const parsed = parseInsightsQuery(new URLSearchParams(view), built.now);
    if (!parsed.ok) throw new Error(parsed.error);
    const times = [];
    for (let i = 0; i < 3; i++) { const s = performance.now(); await insights(parsed.query, built.now); times.push(performance.now() - s); }
    console.log(view, times.map((x) => x.toFixed(0)).join(" "));
  }
  const times = [];
  for (let i = 0; i < 3; i++) { const s = performance.now(); await metricsSnapshot(built.now); times.push(performance.now() - s); }
  console.log("metrics", times.map((x) => x.toFixed(0)).join(" "));
} catch (error) {
  console.error("FAILED", error);
} finally {
  cluster.stop();
  process.exit(0);
}
