"use server";

import { addRule, RULE_INPUT } from "@/lib/server/alerts-admin";
import { formAction } from "./safe-action";

/** The Alerts page's "Add rule": one alert event sent to one destination. */
export const addAlertRule = formAction(
  { name: "alert.rule.create", access: "admin", input: RULE_INPUT, revalidate: "/alerts" },
  async (input, { principal, now }) => addRule(input, principal.actor, now),
  ({ event, destinationId, threshold }, outcome) => ({ target: event, result: outcome.ok ? "ok" : "refused", detail: `${destinationId}${threshold === null ? "" : ` at ${threshold} %`}` }),
);
