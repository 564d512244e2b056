import { withIngestSource } from "@/lib/server/auth";
import { problem } from "@/lib/server/http";
import { handleIngest } from "@/lib/server/ingest-request";
import { isNativeFormat, NATIVE_FORMATS } from "@/lib/ingest/types";

export const dynamic = "force-dynamic";

/** Native agent output exactly as the agent writes it: /api/v1/ingest/{codex|codex-exec|claude}. */
export const POST = withIngestSource<{ format: string }>(async (request, source, { params }) => {
  const { format } = await params;
  if (!isNativeFormat(format)) {
    return problem(404, "Unknown format", `No native format "${format}"; use one of ${NATIVE_FORMATS.join(", ")}.`);
  }
  return handleIngest(request, source, format);
});
