import { memoryReport } from "@/lib/server/diagnostics";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** The server's heap and resident memory (after a garbage collection when `--expose-gc` is on). */
export const GET = route({ access: "admin" }, () => Response.json(memoryReport()));
