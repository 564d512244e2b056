import type { Alert } from "./rules";

/** The body formats a destination can take. */
export const ALERT_FORMATS = ["json", "slack"] as const;
export type AlertFormat = (typeof ALERT_FORMATS)[number];

export const ALERT_FORMAT_LABELS: Record<AlertFormat, string> = { json: "Generic JSON", slack: "Slack-compatible" };

/**
 * A value as Slack's `text` shows it literally. Slack reads `<…>` as markup (`<!channel>` notifies
 * everyone, `<http://x|label>` is a link under any label) and `&` as the start of an entity, so it
 * asks senders to escape exactly these three. Alert texts are plain text built from values a
 * source chose (thread ids, titles, source names): the whole text goes through here.
 */
export function slackEscape(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * The body of one delivery. `json` is the alert itself with its outbox id (a receiver de-duplicates
 * on `id`: a delivery retried after a lost answer carries the same id) and an absolute link;
 * `slack` is what a Slack incoming webhook (and compatible chat tools) accept, its only markup the
 * radar's own link.
 */
export function alertBody(format: AlertFormat, alert: Omit<Alert, "key">, outboxId: number, baseUrl: string): string {
  const url = alert.path ? `${baseUrl}${alert.path}` : null;
  if (format === "slack") {
    const mark = alert.state === "cleared" ? ":white_check_mark:" : alert.event === "test" ? ":wave:" : ":rotating_light:";
    return JSON.stringify({ text: `${mark} ${slackEscape(alert.text)}${url ? ` <${slackEscape(url)}|open>` : ""}` });
  }
  const { path: _path, threshold: _threshold, ...rest } = alert;
  return JSON.stringify({ id: outboxId, ...rest, url });
}
