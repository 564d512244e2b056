import { z } from "zod";

/** A positive integer path parameter, such as a thread's key or an event's seq. */
export const positiveId = (name: string) =>
  z.coerce.number({ error: `${name}: expected a positive integer.` }).pipe(z.number().int().min(1, `${name}: expected a positive integer.`).max(Number.MAX_SAFE_INTEGER, `${name}: expected a positive integer.`));

/** The `[key]` of the by-key routes: a thread's unique internal key. */
export const threadKeyParams = { schema: z.object({ key: positiveId("key") }), status: 400 as const, title: "Bad key" };
