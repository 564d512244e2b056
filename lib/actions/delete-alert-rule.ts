"use server";

import { z } from "zod";
import { deleteAlertRule } from "@/lib/db/alerts";
import { fail, formAction } from "./safe-action";

export const removeAlertRule = formAction(
  { name: "alert.rule.delete", access: "admin", input: z.object({ ruleId: z.string().min(1).max(100) }), revalidate: "/alerts" },
  async ({ ruleId }) => ((await deleteAlertRule(ruleId)) ? { ok: true as const } : fail(`No rule ${ruleId}.`)),
  ({ ruleId }, outcome) => ({ target: ruleId, result: outcome.ok ? "deleted" : "not-found" }),
);
