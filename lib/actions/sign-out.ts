"use server";

import { headers } from "next/headers";
import { z } from "zod";
import { auth } from "@/lib/auth/better-auth";
import { endSessions } from "@/lib/db/people";
import { publishPrincipalsChanged } from "@/lib/server/bus";
import { action } from "./safe-action";

/** Signs out this browser, or (`everywhere`) every session of the person. */
export const signOut = action(
  { name: "sign-out", access: "viewer", input: z.object({ everywhere: z.boolean().default(false) }) },
  async ({ everywhere }, { principal }) => {
    let ended = 0;
    if (everywhere && principal.personId) ended = await endSessions(principal.personId);
    await (await auth()).api.signOut({ headers: new Headers(await headers()) }).catch(() => undefined);
    // The live streams of what was signed out end at once.
    if (everywhere && principal.personId) publishPrincipalsChanged({ kind: "sessions", id: principal.personId });
    else if (principal.sessionId) publishPrincipalsChanged({ kind: "session", id: principal.sessionId });
    return { ok: true, ended };
  },
  ({ everywhere }, outcome) => ({ action: everywhere ? "sign-out.everywhere" : "sign-out", result: "ok", detail: everywhere && outcome.ok ? `${outcome.ended} sessions ended` : null }),
);
