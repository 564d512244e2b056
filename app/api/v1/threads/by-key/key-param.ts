import { z } from "zod";
import { positiveId } from "@/lib/validation";

/** The `[key]` of the by-key routes: a thread's unique internal key. */
export const threadKeyParams = { schema: z.object({ key: positiveId("key") }), status: 400 as const, title: "Bad key" };
