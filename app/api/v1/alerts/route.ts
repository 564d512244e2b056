import { alertsOverview } from "@/lib/db/alerts";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** Destinations (never their secrets), rules, the latest alerts with every delivery attempt, and raised conditions. */
export const GET = route({ access: "admin" }, async ({ now }) => Response.json(await alertsOverview(now)));
