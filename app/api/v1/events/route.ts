import { handleIngest, INGEST_BODY } from "@/lib/server/ingest-request";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** Canonical events: one JSON object, a JSON array, or NDJSON. Fields: README "Canonical events". */
export const POST = route({ access: "ingest", text: INGEST_BODY }, ({ request, text, source, now }) =>
  handleIngest(request, text, source, "canonical", now),
);
