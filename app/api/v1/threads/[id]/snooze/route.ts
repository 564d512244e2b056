import { z } from "zod";
import { MAX_COMMAND_BYTES } from "@/lib/server/http";
import { route } from "@/lib/server/route";
import { changeVisibility } from "@/lib/server/archive";

export const dynamic = "force-dynamic";

/** Snooze a thread until a time (hidden from the board until then); DELETE wakes it now. */
export const POST = route(
  {
    access: "operator",
    body: {
      schema: z.object({ until: z.iso.datetime({ offset: true }) }),
      maxBytes: MAX_COMMAND_BYTES,
      title: "Invalid snooze request",
      example: 'a JSON object such as {"until": "2026-12-01T09:00:00Z"}',
    },
    thread: true,
  },
  async ({ principal, body, thread, now }) => Response.json(await changeVisibility(thread, { snoozeUntil: Date.parse(body.until) }, principal, now)),
);

export const DELETE = route({ access: "operator", thread: true }, async ({ principal, thread, now }) =>
  Response.json(await changeVisibility(thread, { snoozeUntil: null }, principal, now)),
);
