import { z } from "zod";
import { NATIVE_FORMATS } from "@/lib/ingest/types";
import { handleIngest, INGEST_BODY } from "@/lib/server/ingest-request";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** Native agent output exactly as the agent writes it: /api/v1/ingest/{codex|codex-exec|claude}. */
export const POST = route(
  {
    access: "ingest",
    params: {
      schema: z.object({
        format: z.enum(NATIVE_FORMATS, { error: (issue) => `No native format "${String(issue.input)}"; use one of ${NATIVE_FORMATS.join(", ")}.` }),
      }),
      status: 404,
      title: "Unknown format",
    },
    text: INGEST_BODY,
  },
  ({ request, text, source, params, now }) => handleIngest(request, text, source, params.format, now),
);
