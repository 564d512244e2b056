import { z } from "zod";
import { MAX_COMMAND_BYTES, problem } from "./http";
import { route } from "./route";
import { continueThread, type ContinueAction } from "./continue";

/** The API twins of Resume now and Retry now: same code path, same audit entry. */
export function continueRoute(action: ContinueAction, label: string) {
  return route(
    {
      access: "operator",
      body: {
        schema: z.object({ reason: z.string().trim().max(500).optional() }),
        maxBytes: MAX_COMMAND_BYTES,
        title: `Invalid ${label} request`,
        example: 'an empty body or a JSON object such as {"reason": "…"}',
        emptyAs: {},
      },
      thread: true,
    },
    async ({ principal, body, thread, now }) => {
      const result = await continueThread(action, thread, principal, body.reason || `${label} (API)`, now);
      if (result.result === "unreachable") {
        return problem(409, "Nothing can reach this agent", result.detail ?? `The thread's source cannot carry out ${label}.`, { threadId: result.threadId });
      }
      if (result.result === "not-applicable") return problem(409, `Nothing to ${label.toLowerCase()}`, result.detail ?? "", { threadId: result.threadId, status: result.status });
      return Response.json(result, { status: result.result === "sent" ? 202 : 404 });
    },
  );
}
