import { threadBoard, threadRows } from "@/lib/db/threads";
import { problem } from "@/lib/server/http";
import { route } from "@/lib/server/route";
import { parseThreadQuery } from "@/lib/threads/filter";
import { MAX_THREAD_ROWS, type ThreadRows } from "@/lib/wire/types";

export const dynamic = "force-dynamic";

/**
 * Threads, newest first (`order=attention`: those needing an operator first), filtered like the
 * board: ?status=&kind=&provider=&model=&source=&q=&from=&to=&page=&pageSize=
 * Or `?keys=1,2,3`: the current rows of those threads, by key (the live-update protocol).
 */
export const GET = route({ access: "viewer" }, async ({ search, now }) => {
  const keys = search.get("keys");
  if (keys !== null) {
    const list = keys.split(",").map((key) => Number(key.trim()));
    if (list.length > MAX_THREAD_ROWS || list.some((key) => !Number.isSafeInteger(key) || key <= 0)) {
      return problem(400, "Bad keys", `keys: give at most ${MAX_THREAD_ROWS} thread keys (positive integers) separated by commas, e.g. ?keys=12,15.`);
    }
    return Response.json({ threads: await threadRows(list, now), serverTime: new Date(now).toISOString() } satisfies ThreadRows);
  }
  const parsed = parseThreadQuery(search);
  if (!parsed.ok) return problem(400, "Bad filter", parsed.error);
  const { page, pageSize, ...filter } = parsed.query;
  return Response.json(await threadBoard(filter, { page, pageSize, attentionFirst: search.get("order") === "attention" }, now));
});
