import { z } from "zod";
import { MAX_COMMAND_BYTES, problem } from "@/lib/server/http";
import { route } from "@/lib/server/route";
import { stopThreads } from "@/lib/server/stop";

export const dynamic = "force-dynamic";

/** The API twin of the Stop retrying button: same code path, same audit entry. */
export const POST = route(
  {
    access: "operator",
    body: {
      schema: z.object({ reason: z.string().trim().max(500).optional() }),
      maxBytes: MAX_COMMAND_BYTES,
      title: "Invalid stop request",
      example: 'an empty body or a JSON object such as {"reason": "…"}',
      emptyAs: {},
    },
    thread: true,
  },
  async ({ principal, body, thread, now }) => {
    const [result] = await stopThreads([thread], principal, body.reason || "Stop retrying (API)", now);
    if (result.result === "unreachable") {
      return problem(409, "Nothing can reach this agent", result.detail ?? "The thread's source cannot carry out a stop.", { threadId: result.threadId });
    }
    return Response.json(result, { status: result.result === "stopping" ? 202 : 200 });
  },
);
