import { databaseHealth } from "@/lib/db/health";
import { route } from "@/lib/server/route";
import pkg from "@/package.json";

export const dynamic = "force-dynamic";

export const GET = route({ access: "public" }, async () => {
  const health = await databaseHealth();
  return Response.json(
    { status: health.ok ? "ok" : "error", version: pkg.version, database: health },
    { status: health.ok ? 200 : 503 },
  );
});
