import { databaseHealth } from "@/lib/db/health";
import pkg from "@/package.json";

export const dynamic = "force-dynamic";

export async function GET() {
  const health = await databaseHealth();
  return Response.json(
    { status: health.ok ? "ok" : "error", version: pkg.version, database: health },
    { status: health.ok ? 200 : 503 },
  );
}
