import { threadBoard } from "@/lib/db/threads";
import { problem } from "@/lib/server/http";
import { parseThreadQuery } from "@/lib/threads/filter";

export const dynamic = "force-dynamic";

/**
 * Threads, newest first (`order=attention`: those needing an operator first), filtered like the
 * board: ?status=&kind=&provider=&model=&source=&q=&from=&to=&page=&pageSize=
 */
export async function GET(request: Request) {
  const url = new URL(request.url);
  const parsed = parseThreadQuery(url.searchParams);
  if (!parsed.ok) return problem(400, "Bad filter", parsed.error);
  const { page, pageSize, ...filter } = parsed.query;
  return Response.json(await threadBoard(filter, { page, pageSize, attentionFirst: url.searchParams.get("order") === "attention" }));
}
