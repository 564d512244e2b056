import { threadBoard } from "@/lib/db/threads";
import { problem } from "@/lib/server/http";
import { route } from "@/lib/server/route";
import { parseThreadQuery } from "@/lib/threads/filter";

export const dynamic = "force-dynamic";

/**
 * Threads, newest first (`order=attention`: those needing an operator first), filtered like the
 * board: ?status=&kind=&provider=&model=&source=&q=&from=&to=&page=&pageSize=
 */
export const GET = route({ access: "viewer" }, async ({ search, now }) => {
  const parsed = parseThreadQuery(search);
  if (!parsed.ok) return problem(400, "Bad filter", parsed.error);
  const { page, pageSize, ...filter } = parsed.query;
  return Response.json(await threadBoard(filter, { page, pageSize, attentionFirst: search.get("order") === "attention" }, now));
});
