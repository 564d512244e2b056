import { route } from "@/lib/server/route";
import { changeVisibility } from "@/lib/server/archive";

export const dynamic = "force-dynamic";

/** Archive a thread (hidden from the board, its pending resume cancelled); DELETE unarchives it. */
export const POST = route({ access: "operator", thread: true }, async ({ principal, thread, now }) =>
  Response.json(await changeVisibility(thread, { archive: true }, principal, now)),
);

export const DELETE = route({ access: "operator", thread: true }, async ({ principal, thread, now }) =>
  Response.json(await changeVisibility(thread, { archive: false }, principal, now)),
);
