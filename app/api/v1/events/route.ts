import { withIngestSource } from "@/lib/server/auth";
import { handleIngest } from "@/lib/server/ingest-request";

export const dynamic = "force-dynamic";

/** Canonical events: one JSON object, a JSON array, or NDJSON. Fields: README "Canonical events". */
export const POST = withIngestSource((request, source) => handleIngest(request, source, "canonical"));
