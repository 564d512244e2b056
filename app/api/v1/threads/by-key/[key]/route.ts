import { threadDetail } from "@/lib/db/threads";
import { problem } from "@/lib/server/http";
import { route } from "@/lib/server/route";
import type { ThreadDetailResponse } from "@/lib/wire/types";
import { threadKeyParams } from "../key-param";

export const dynamic = "force-dynamic";

/** The thread page's live refresh: a thread by its unique internal key. */
export const GET = route({ access: "viewer", params: threadKeyParams }, async ({ params, now }) => {
  const detail = await threadDetail(params.key, now);
  if (!detail) return problem(404, "Not found", `No thread with key ${params.key}.`);
  return Response.json({ ...detail, serverTime: new Date(now).toISOString() } satisfies ThreadDetailResponse);
});
