import { stillHolds } from "@/lib/server/auth";
import { liveStream } from "@/lib/server/live-stream";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** Server-sent events for the UI: the keys of changed threads (lib/server/live-stream.ts). */
export const GET = route({ access: "viewer" }, ({ request, principal }) =>
  liveStream(request, { principal, stillValid: () => stillHolds(request.headers, principal) }),
);
