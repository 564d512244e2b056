import { z } from "zod";
import { acknowledgeDirective } from "@/lib/server/directives";
import { MAX_COMMAND_BYTES, problem } from "@/lib/server/http";
import { route } from "@/lib/server/route";

export const dynamic = "force-dynamic";

/** A source reports what became of a directive: `{"result": "acknowledged" | "failed", "detail"}`. */
export const POST = route(
  {
    access: "ingest",
    body: {
      schema: z.object({ result: z.enum(["acknowledged", "failed"]), detail: z.string().max(2000).nullish() }),
      maxBytes: MAX_COMMAND_BYTES,
      title: "Invalid acknowledgement",
      example: 'a JSON object such as {"result": "acknowledged"}',
    },
  },
  async ({ source, params, body, request }) => {
    const outcome = await acknowledgeDirective(source.id, params.id, body.result, body.detail ?? null);
    if (!outcome.ok) return problem(outcome.status, outcome.status === 404 ? "Not found" : "Conflict", outcome.error);
    return Response.json({ id: params.id, result: body.result, threadStatus: outcome.threadStatus });
  },
);
