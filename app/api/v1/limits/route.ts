import { read } from "@/lib/server/off-thread";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/**
 * Every usage window's latest snapshot, for scripts and scrapers: one row per (source, account,
 * provider, window) with ISO-8601 times, percentages 0–100, status, staleness and the threads it
 * blocks. Fields: LimitWindowView in lib/wire/types.ts.
 */
export const GET = route({ access: "viewer" }, async ({ now }) => Response.json(await read("limits", now)));
