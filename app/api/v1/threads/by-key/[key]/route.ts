import { threadDetail } from "@/lib/db/threads";
import { problem } from "@/lib/server/http";

export const dynamic = "force-dynamic";

/** The thread page's live refresh: a thread by its unique internal key. */
export async function GET(_request: Request, { params }: { params: Promise<{ key: string }> }) {
  const key = Number((await params).key);
  if (!Number.isSafeInteger(key) || key < 1) return problem(400, "Bad key", "key: expected a positive integer.");
  const now = Date.now();
  const detail = await threadDetail(key, now);
  if (!detail) return problem(404, "Not found", `No thread with key ${key}.`);
  return Response.json({ ...detail, serverTime: new Date(now).toISOString() });
}
