"use server";

import { z } from "zod";
import { deleteAlertDestination } from "@/lib/db/alerts";
import { fail, formAction } from "./safe-action";

/** Removes a destination with its rules; alerts still waiting for it are marked failed. */
export const removeAlertDestination = formAction(
  { name: "alert.destination.delete", access: "admin", input: z.object({ destinationId: z.string().min(1).max(100) }), revalidate: "/alerts" },
  async ({ destinationId }, { now }) => {
    const name = await deleteAlertDestination(destinationId, now);
    return name === null ? fail(`No destination ${destinationId}.`) : { ok: true as const, name };
  },
  ({ destinationId }, outcome) => ({ target: outcome.ok ? outcome.name : destinationId, result: outcome.ok ? "deleted" : "not-found" }),
);
