import { z } from "zod";
import { threadBoard, threadRows } from "@/lib/db/threads";
import { problem } from "@/lib/server/http";
import { route } from "@/lib/server/route";
import { parseThreadQuery } from "@/lib/threads/filter";
import { MAX_THREAD_ROWS, type ThreadRows } from "@/lib/wire/types";

export const dynamic = "force-dynamic";

const KEYS_HINT = `give at most ${MAX_THREAD_ROWS} thread keys (positive integers) separated by commas, e.g. ?keys=12,15`;

/** `?keys=`: the live-update protocol's row refetch, bounded in length before it is split. */
const rowsQuery = z.object({
  keys: z
    .string()
    .max(MAX_THREAD_ROWS * 17, KEYS_HINT)
    .transform((keys) => keys.split(",").map((key) => Number(key.trim())))
    .pipe(z.array(z.number().int().positive().max(Number.MAX_SAFE_INTEGER), KEYS_HINT).max(MAX_THREAD_ROWS, KEYS_HINT))
    .optional(),
});

/**
 * Threads, newest first (`order=attention`: those needing an operator first), filtered like the
 * board: ?status=&kind=&provider=&model=&source=&q=&from=&to=&page=&pageSize=
 * Or `?keys=1,2,3`: the current rows of those threads, by key (the live-update protocol); with
 * `&matching=1` and a filter, only those the filter matches (what a board of that filter shows).
 */
export const GET = route({ access: "viewer", query: { schema: rowsQuery, title: "Bad keys", detail: `keys: ${KEYS_HINT}.` } }, async ({ query, search, now }) => {
  const parsed = parseThreadQuery(search);
  const matching = !query.keys || search.get("matching") === "1";
  if (matching && !parsed.ok) return problem(400, "Bad filter", parsed.error);
  const { page, pageSize, ...filter } = parsed.ok ? parsed.query : {};
  if (query.keys) {
    const rows = await threadRows(query.keys, now, matching ? filter : undefined);
    return Response.json({ threads: rows, serverTime: new Date(now).toISOString() } satisfies ThreadRows);
  }
  return Response.json(await threadBoard(filter, { page, pageSize, attentionFirst: search.get("order") === "attention" }, now));
});
