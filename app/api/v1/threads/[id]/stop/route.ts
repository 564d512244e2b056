import { z } from "zod";
import { authorizeOperator } from "@/lib/server/auth";
import { problem, refuseCrossSite } from "@/lib/server/http";
import { describeZodError } from "@/lib/validation";
import { resolveThread } from "@/lib/server/resolve-thread";
import { stopThreads } from "@/lib/server/stop";

export const dynamic = "force-dynamic";

const body = z.object({ reason: z.string().trim().max(500).optional() });

/** The API twin of the Stop retrying button: same code path, same audit entry. */
export async function POST(request: Request, { params }: { params: Promise<{ id: string }> }) {
  const refused = refuseCrossSite(request);
  if (refused) return refused;
  const operator = await authorizeOperator("stop");
  const { id } = await params;
  const text = await request.text();
  let json: unknown = {};
  try {
    json = text.trim() ? JSON.parse(text) : {};
  } catch {
    return problem(400, "Unparseable body", "Expected an empty body or a JSON object such as {\"reason\": \"…\"}.");
  }
  const parsed = body.safeParse(json);
  if (!parsed.success) return problem(400, "Invalid stop request", describeZodError(parsed.error));
  const resolved = await resolveThread(id, new URL(request.url).searchParams.get("source"));
  if (!resolved.ok) return problem(resolved.status, resolved.status === 404 ? "Not found" : "Ambiguous thread id", resolved.error, { candidates: resolved.candidates });
  const [result] = await stopThreads([resolved.key], operator, parsed.data.reason || "Stop retrying (API)");
  return Response.json(result, { status: result.result === "stopping" ? 202 : 200 });
}
