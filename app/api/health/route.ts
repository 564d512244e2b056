import { databaseHealth } from "@/lib/db/health";
import { route } from "@/lib/server/route";
import pkg from "@/package.json";

export const dynamic = "force-dynamic";

/** Anyone may ask whether the radar is up; the details (paths, errors) go to the server's log only. */
export const GET = route({ access: "public" }, async () => {
  const health = await databaseHealth();
  if (!health.ok) process.stderr.write(`[radar] health check: the database is not usable: ${health.error}\n`);
  return Response.json({ status: health.ok ? "ok" : "error", version: pkg.version }, { status: health.ok ? 200 : 503 });
});
