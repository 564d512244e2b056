import { z } from "zod";
import { ALERT_FORMATS } from "@/lib/alerts/body";
import { ALERT_EVENTS, testAlert, THRESHOLD_EVENTS, type AlertEvent } from "@/lib/alerts/rules";
import { newAlertSecret } from "@/lib/alerts/signature";
import { alertSettings } from "@/lib/config";
import { alertDestinationName, createAlertDestination, createAlertRule, enqueueTestAlert } from "@/lib/db/alerts";
import { destinationProblem } from "./webhook";

/**
 * Managing alerts, shared by the Alerts page's actions and the API: one schema and one check per
 * write. The route or action around each call authorizes and audits it.
 */

export const DESTINATION_INPUT = z.object({
  name: z.string().trim().min(1, "a destination needs a name").max(100),
  url: z.string().trim().min(1, "a destination needs a URL").max(2000),
  format: z.enum(ALERT_FORMATS).default("json"),
});

export const RULE_INPUT = z
  .object({
    destinationId: z.string().min(1).max(100),
    event: z.enum(ALERT_EVENTS),
    // Forms send an empty field for "no threshold".
    threshold: z.preprocess((v) => (v === "" || v === undefined ? null : v), z.coerce.number().min(1).max(100).nullable()).default(null),
  })
  .refine((r) => !THRESHOLD_EVENTS.includes(r.event as AlertEvent) || r.threshold !== null, { message: "a limit rule needs a threshold (percent used)", path: ["threshold"] });

export type Saved<T> = ({ ok: true } & T) | { ok: false; error: string };

/** Saves a destination after checking its address; its secret is returned once and never shown again. */
export async function addDestination(input: z.output<typeof DESTINATION_INPUT>, actor: string, now: number): Promise<Saved<{ id: string; secret: string }>> {
  const problem = await destinationProblem(input.url, alertSettings().allow);
  if (problem) return { ok: false, error: `Refused: ${problem}.` };
  const secret = newAlertSecret();
  const id = await createAlertDestination({ ...input, secret, createdBy: actor }, now);
  return { ok: true, id, secret };
}

export async function addRule(input: z.output<typeof RULE_INPUT>, actor: string, now: number): Promise<Saved<{ id: string }>> {
  if ((await alertDestinationName(input.destinationId)) === null) return { ok: false, error: `No destination ${input.destinationId}.` };
  const threshold = THRESHOLD_EVENTS.includes(input.event) ? input.threshold : null;
  return { ok: true, id: await createAlertRule({ ...input, threshold, createdBy: actor }, now) };
}

/** Queues a test alert for a destination; the worker delivers it like any other. */
export async function sendTest(destinationId: string, now: number): Promise<Saved<{ outboxId: number; destination: string }>> {
  const name = await alertDestinationName(destinationId);
  if (name === null) return { ok: false, error: `No destination ${destinationId}.` };
  return { ok: true, outboxId: await enqueueTestAlert(destinationId, testAlert(name, now, crypto.randomUUID()), now), destination: name };
}
