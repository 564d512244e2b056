"use server";

import { addDestination, DESTINATION_INPUT } from "@/lib/server/alerts-admin";
import { formAction } from "./safe-action";

/** The Alerts page's "Add destination": its address checked, its signing secret shown once. */
export const addAlertDestination = formAction(
  { name: "alert.destination.create", access: "admin", input: DESTINATION_INPUT, revalidate: "/alerts" },
  async (input, { principal, now }) => {
    const saved = await addDestination(input, principal.actor, now);
    return saved.ok ? { ok: true as const, id: saved.id, secret: saved.secret, name: input.name } : saved;
  },
  ({ name, url, format }, outcome) => ({ target: name, result: outcome.ok ? "ok" : "refused", detail: outcome.ok ? `${format} ${url}` : outcome.error }),
);
