"use client";

import { useQuery } from "@tanstack/react-query";
import { useActionState } from "react";
import { ALERT_FORMAT_LABELS, ALERT_FORMATS } from "@/lib/alerts/body";
import type { AlertState } from "@/lib/alerts/delivery";
import { ALERT_EVENT_LABELS, ALERT_EVENTS, THRESHOLD_EVENTS, type AlertEvent } from "@/lib/alerts/rules";
import { addAlertDestination } from "@/lib/actions/create-alert-destination";
import { addAlertRule } from "@/lib/actions/create-alert-rule";
import { removeAlertDestination } from "@/lib/actions/delete-alert-destination";
import { removeAlertRule } from "@/lib/actions/delete-alert-rule";
import { sendTestAlert } from "@/lib/actions/send-test-alert";
import { alertsQuery } from "@/lib/client/queries";
import type { AlertDestinationView, AlertsOverview } from "@/lib/wire/types";
import { Timestamp } from "@/components/time/timestamp";
import { ActionOutcome } from "@/components/ui/action-outcome";
import { Field, styles } from "@/components/ui/controls";
import { Table } from "@/components/ui/table";

/** Deliveries happen in the background: the page looks again this often. */
const REFRESH_MS = 2_000;

const eventLabel = (event: string) => (event === "test" ? "Test" : (ALERT_EVENT_LABELS[event as AlertEvent] ?? event));

/** `allow`: the deployment's webhook host patterns, shown so a refused destination explains itself. */
export function AlertsView({ initial, allow }: { initial: AlertsOverview; allow: readonly string[] }) {
  const { data } = useQuery({ ...alertsQuery(), initialData: initial, refetchInterval: REFRESH_MS });
  return (
    <div className="space-y-8">
      <section aria-labelledby="destinations-heading" className="space-y-4">
        <h1 id="destinations-heading" className="text-2xl font-semibold tracking-tight">Alerts</h1>
        <p className="text-sm text-slate-600">
          Alerts go to webhooks, signed: <code>X-Radar-Signature: v1=</code>HMAC-SHA256 of <code>timestamp.body</code> with the destination&apos;s
          secret, and <code>X-Radar-Timestamp</code> (refuse one older than 5 minutes). Receivers de-duplicate on the body&apos;s <code>id</code>.
        </p>
        <p data-testid="webhook-allow" className="text-sm text-slate-600">
          {allow.length ? (
            <>Destinations must match <code>RADAR_WEBHOOK_ALLOW</code>: {allow.map((pattern, i) => <span key={pattern}>{i > 0 && ", "}<code>{pattern}</code></span>)};</>
          ) : (
            <><code>RADAR_WEBHOOK_ALLOW</code> is not set: any public host may be a destination;</>
          )}{" "}
          loopback and private addresses are refused unless their host is listed by name.
        </p>
        <Destinations destinations={data.destinations} />
        <AddDestination />
      </section>
      <Rules overview={data} />
      <Deliveries overview={data} />
    </div>
  );
}

function Destinations({ destinations }: { destinations: AlertDestinationView[] }) {
  const [tested, test, testing] = useActionState(sendTestAlert, null);
  const [removed, remove, removing] = useActionState(removeAlertDestination, null);
  return (
    <div className="space-y-2">
      <Table testId="alert-destinations" columns={["Name", "URL", "Body", "Added", ""]} empty={destinations.length === 0 ? "No destinations yet: add a webhook below." : null}>
        {destinations.map((d) => (
          <tr key={d.id} data-testid="alert-destination-row" data-name={d.name}>
            <td className={styles.td + " font-medium"}>{d.name}</td>
            <td className={styles.td + " break-all font-mono text-xs"}>{d.url}</td>
            <td className={styles.td}>{ALERT_FORMAT_LABELS[d.format]}</td>
            <td className={styles.td}><Timestamp iso={d.createdAt} /> by {d.createdBy}</td>
            <td className={styles.td + " text-right"}>
              <div className="flex justify-end gap-2">
                <form action={test}>
                  <input type="hidden" name="destinationId" value={d.id} />
                  <button type="submit" disabled={testing} className={styles.rowButton} data-testid="alert-send-test">Send test</button>
                </form>
                <form action={remove}>
                  <input type="hidden" name="destinationId" value={d.id} />
                  <button type="submit" disabled={removing} className={styles.rowDangerButton} aria-label={`Delete ${d.name}`}>Delete</button>
                </form>
              </div>
            </td>
          </tr>
        ))}
      </Table>
      {tested?.ok && <p role="status" data-testid="alert-test-queued" className="text-sm text-slate-700">Test alert queued for {tested.destination}.</p>}
      <ActionOutcome state={tested ?? removed} testId="alerts-error" />
    </div>
  );
}

function AddDestination() {
  const [added, add, pending] = useActionState(addAlertDestination, null);
  return (
    <div className="space-y-3">
      {added?.ok && (
        <div role="status" data-testid="alert-destination-added" className="space-y-1 rounded-lg border border-amber-300 bg-amber-50 p-4 text-sm">
          <p className="font-medium">Added {added.name}. Its signing secret — copy it to the receiver now, it is not shown again:</p>
          <code data-testid="alert-destination-secret" className="block break-all rounded bg-white p-2 font-mono">{added.secret}</code>
        </div>
      )}
      <form action={add} aria-label="Add a destination" className="flex flex-wrap items-end gap-3 rounded-lg border border-dashed border-slate-300 bg-white p-4">
        <Field label="Name">
          <input name="name" required maxLength={100} className={styles.control} data-testid="new-destination-name" />
        </Field>
        <Field label="Webhook URL" className="min-w-[22rem] grow">
          <input name="url" type="url" required maxLength={2000} className={styles.control} data-testid="new-destination-url" placeholder="https://hooks.example.com/…" />
        </Field>
        <Field label="Body">
          <select name="format" defaultValue="json" className={styles.control} data-testid="new-destination-format">
            {ALERT_FORMATS.map((format) => <option key={format} value={format}>{ALERT_FORMAT_LABELS[format]}</option>)}
          </select>
        </Field>
        <button type="submit" disabled={pending} className={styles.primaryButton} data-testid="new-destination-submit">Add destination</button>
      </form>
      <ActionOutcome state={added} testId="alerts-error" />
    </div>
  );
}

function Rules({ overview }: { overview: AlertsOverview }) {
  const [added, add, adding] = useActionState(addAlertRule, null);
  const [removed, remove, removing] = useActionState(removeAlertRule, null);
  const names = new Map(overview.destinations.map((d) => [d.id, d.name]));
  return (
    <section aria-labelledby="rules-heading" className="space-y-4">
      <h2 id="rules-heading" className="text-xl font-semibold tracking-tight">Rules</h2>
      <Table testId="alert-rules" columns={["When", "Send to", "Added", ""]} empty={overview.rules.length === 0 ? "No rules: nothing raises an alert yet." : null}>
        {overview.rules.map((rule) => (
          <tr key={rule.id} data-testid="alert-rule-row">
            <td className={styles.td}>{eventLabel(rule.event)}{rule.threshold !== null && ` (${rule.threshold} %)`}</td>
            <td className={styles.td}>{names.get(rule.destinationId) ?? rule.destinationId}</td>
            <td className={styles.td}><Timestamp iso={rule.createdAt} /> by {rule.createdBy}</td>
            <td className={styles.td + " text-right"}>
              <form action={remove}>
                <input type="hidden" name="ruleId" value={rule.id} />
                <button type="submit" disabled={removing} className={styles.rowDangerButton}>Delete</button>
              </form>
            </td>
          </tr>
        ))}
      </Table>
      {overview.destinations.length > 0 && (
        <form action={add} aria-label="Add a rule" className="flex flex-wrap items-end gap-3 rounded-lg border border-dashed border-slate-300 bg-white p-4">
          <Field label="When">
            <select name="event" defaultValue="incident.opened" className={styles.control} data-testid="new-rule-event">
              {ALERT_EVENTS.map((event) => <option key={event} value={event}>{ALERT_EVENT_LABELS[event]}</option>)}
            </select>
          </Field>
          <Field label={`Threshold, % used (${THRESHOLD_EVENTS.map((e) => ALERT_EVENT_LABELS[e].toLowerCase()).join(", ")})`}>
            <input name="threshold" type="number" min={1} max={100} className={styles.control} data-testid="new-rule-threshold" />
          </Field>
          <Field label="Send to">
            <select name="destinationId" className={styles.control} data-testid="new-rule-destination">
              {overview.destinations.map((d) => <option key={d.id} value={d.id}>{d.name}</option>)}
            </select>
          </Field>
          <button type="submit" disabled={adding} className={styles.primaryButton} data-testid="new-rule-submit">Add rule</button>
        </form>
      )}
      <ActionOutcome state={added ?? removed} testId="alerts-error" />
      {overview.conditions.length > 0 && (
        <div data-testid="alert-conditions" className="rounded-lg border border-amber-300 bg-amber-50 p-4 text-sm">
          <p className="font-medium">Raised now:</p>
          <ul className="list-disc pl-5">
            {overview.conditions.map((c) => (
              <li key={c.key}>{eventLabel(c.event)} — {c.subject} (since <Timestamp iso={c.raisedAt} />)</li>
            ))}
          </ul>
        </div>
      )}
    </section>
  );
}

const STATE_STYLE: Record<AlertState, string> = { delivered: "text-emerald-800", pending: "text-amber-800", failed: "text-red-800" };

function Deliveries({ overview }: { overview: AlertsOverview }) {
  return (
    <section aria-labelledby="deliveries-heading" className="space-y-4">
      <h2 id="deliveries-heading" className="text-xl font-semibold tracking-tight">Deliveries</h2>
      <Table testId="alert-deliveries" columns={["Alert", "To", "State", "Attempts", "Raised"]} empty={overview.outbox.length === 0 ? "No alerts yet." : null}>
        {overview.outbox.map((o) => (
          <tr key={o.id} data-testid="alert-delivery-row" data-state={o.state} data-event={o.event} data-destination={o.destination}>
            <td className={styles.td}>
              <span className="font-medium">{eventLabel(o.event)}</span>
              <span className="block text-xs text-slate-600">{o.text}</span>
            </td>
            <td className={styles.td}>{o.destination}</td>
            <td className={`${styles.td} ${STATE_STYLE[o.state]}`} data-testid="alert-delivery-state">
              {o.state}
              {o.state === "pending" && o.attempts > 0 && <span className="block text-xs">next attempt <Timestamp iso={o.nextAttemptAt} /></span>}
              {o.state === "delivered" && o.deliveredAt && <span className="block text-xs"><Timestamp iso={o.deliveredAt} /></span>}
            </td>
            <td className={styles.td + " text-xs"}>
              {o.history.length === 0
                ? "—"
                : o.history.map((a, i) => (
                    <span key={i} className="block">
                      <Timestamp iso={a.at} withDate={false} />: {a.status === null ? a.error : `HTTP ${a.status}`} ({a.durationMs} ms)
                    </span>
                  ))}
            </td>
            <td className={styles.td}><Timestamp iso={o.createdAt} /></td>
          </tr>
        ))}
      </Table>
    </section>
  );
}
