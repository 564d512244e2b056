import { z } from "zod";
import { withIngestSource } from "@/lib/server/auth";
import { acknowledgeDirective } from "@/lib/server/directives";
import { problem } from "@/lib/server/http";
import { describeZodError } from "@/lib/validation";

export const dynamic = "force-dynamic";

const body = z.object({
  result: z.enum(["acknowledged", "failed"]),
  detail: z.string().max(2000).nullish(),
});

/** A source reports what became of a directive: `{"result": "acknowledged" | "failed", "detail"}`. */
export const POST = withIngestSource<{ id: string }>(async (request, source, { params }) => {
  const { id } = await params;
  let json: unknown;
  try {
    json = await request.json();
  } catch {
    return problem(400, "Unparseable body", "Expected a JSON object such as {\"result\": \"acknowledged\"}.");
  }
  const parsed = body.safeParse(json);
  if (!parsed.success) return problem(400, "Invalid acknowledgement", describeZodError(parsed.error));
  const outcome = await acknowledgeDirective(source.id, id, parsed.data.result, parsed.data.detail ?? null);
  if (!outcome.ok) return problem(outcome.status, outcome.status === 404 ? "Not found" : "Conflict", outcome.error);
  return Response.json({ id, result: parsed.data.result, threadStatus: outcome.threadStatus });
});
