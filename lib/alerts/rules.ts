import type { IncidentRecord } from "@/lib/retry/incidents";
import { humanDuration, kindLabel, statusLabel } from "@/lib/ui/format";

/**
 * What raises an alert, as pure functions of facts and the clock. Two families:
 * - facts (an incident opened or closed, a thread turned stalled, exhausted or broken): each
 *   raises one alert, in the unit of work that stored the fact (a stall, never stored, when the
 *   worker finds it);
 * - conditions (a limit window above a threshold, and the radar going blind: a source silent for
 *   much longer than usual, a relay that stopped polling, a stop nobody acknowledged, the outbox
 *   backing up): raised once when the condition starts and cleared once when it ends.
 * Every alert has a key: the same fact or the same condition episode never raises two.
 */

export const ALERT_EVENTS = [
  "incident.opened",
  "incident.closed",
  "thread.stalled",
  "thread.exhausted",
  "thread.broken",
  "limit.above",
  "source.silent",
  "relay.silent",
  "stop.unacknowledged",
  "outbox.backlog",
] as const;
export type AlertEvent = (typeof ALERT_EVENTS)[number];

export const ALERT_EVENT_LABELS: Record<AlertEvent, string> = {
  "incident.opened": "Incident opened",
  "incident.closed": "Incident closed",
  "thread.stalled": "Thread stalled",
  "thread.exhausted": "Thread exhausted its retries",
  "thread.broken": "Thread broken",
  "limit.above": "Limit window above a threshold",
  "source.silent": "Source silent for longer than usual",
  "relay.silent": "Relay stopped polling for directives",
  "stop.unacknowledged": "Stop nobody acknowledged",
  "outbox.backlog": "Alert outbox backing up",
};

/** Events whose rule names a threshold (percent of the window used). */
export const THRESHOLD_EVENTS: readonly AlertEvent[] = ["limit.above"];

/** An alert as its generic JSON body carries it (the outbox adds its id when delivering). */
export interface Alert {
  /** Unique per fact or condition episode: the outbox keeps one alert per key and destination. */
  key: string;
  event: AlertEvent | "test";
  /** `fired` for facts; `raised` and `cleared` for conditions. */
  state: "fired" | "raised" | "cleared";
  subject: string;
  text: string;
  at: string;
  /** The page about it, relative to the radar's address; null when none. */
  path: string | null;
  /** For limit alerts: the rule's threshold, so only rules of that threshold send it. */
  threshold?: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

function incidentScope(incident: IncidentRecord, sourceNames: ReadonlyMap<string, string>): string {
  if (incident.sourceId !== null) return `source ${sourceNames.get(incident.sourceId) ?? incident.sourceId}`;
  return [incident.provider ?? "unknown provider", incident.model ?? "any model"].join(" · ");
}

/**
 * Incidents opened or closed by one detector step: opened when an incident is open (or closed)
 * now and was not open before the step, closed when the step closed it.
 */
export function incidentAlerts(openBefore: ReadonlySet<string>, changed: readonly IncidentRecord[], now: number, sourceNames: ReadonlyMap<string, string> = new Map()): Alert[] {
  const alerts: Alert[] = [];
  for (const incident of changed) {
    const scope = incidentScope(incident, sourceNames);
    const kind = kindLabel(incident.kind);
    const threads = `${incident.threads.length} thread${incident.threads.length === 1 ? "" : "s"}`;
    const path = `/incidents/${encodeURIComponent(incident.id)}`;
    // One that opened and closed within the step (notices from the past) gets both alerts.
    if (incident.state !== "forming" && !openBefore.has(incident.id)) {
      alerts.push({ key: `incident.opened:${incident.id}`, event: "incident.opened", state: "fired", subject: incident.id, text: `Incident opened: ${kind} — ${scope} — ${threads} since ${iso(incident.startedAt)}`, at: iso(now), path });
    }
    if (incident.state === "closed") {
      const how = incident.closedBy === "recovered" ? "all threads recovered" : "quiet";
      alerts.push({ key: `incident.closed:${incident.id}`, event: "incident.closed", state: "fired", subject: incident.id, text: `Incident closed (${how}): ${kind} — ${scope} — ${threads}`, at: iso(now), path });
    }
  }
  return alerts;
}

const THREAD_EVENTS: Record<string, AlertEvent> = { stalled: "thread.stalled", exhausted: "thread.exhausted", broken: "thread.broken" };

export interface ThreadTransition {
  key: number;
  externalId: string;
  title: string | null;
  statusBefore: string | null;
  status: string;
  /** The thread's last applied event: a later turn into the same status is another alert. */
  lastSeq: number;
}

/**
 * `stalled` is never stored (a retry past its deadline that no tick has ended yet), so no unit of
 * work turns a thread stalled: the alert worker finds threads whose deadline passed this long ago,
 * longer than the watchdog ever takes to tick on time, and raises one alert per stall.
 */
export const STALLED_ALERT_AFTER_MS = 15_000;

/** A thread that turned stalled, exhausted or broken (in a unit of work, a quarantine, or found stalled). */
export function threadAlerts(transitions: readonly ThreadTransition[], now: number): Alert[] {
  return transitions.flatMap((t) => {
    const event = THREAD_EVENTS[t.status];
    if (!event || t.statusBefore === t.status) return [];
    const name = t.title ? `${t.externalId} (${t.title})` : t.externalId;
    return [{ key: `${event}:${t.key}:${t.lastSeq}`, event, state: "fired", subject: t.externalId, text: `Thread ${statusLabel(t.status)}: ${name}`, at: iso(now), path: `/threads/${encodeURIComponent(t.externalId)}` } satisfies Alert];
  });
}

/** What the alert worker observes on each pass. Times are epoch ms. */
export interface Observations {
  sources: { id: string; name: string; lastSeenAt: number | null; usualGapMs: number | null; lastPolledAt: number | null }[];
  /** Stops (interrupt directives) not acknowledged yet. */
  stops: { id: string; thread: string; source: string; createdAt: number }[];
  /** The oldest alert still waiting to be delivered. */
  oldestPendingAt: number | null;
  limits: { sourceId: string; source: string; provider: string; account: string; window: string; usedPercent: number | null }[];
}

export interface BlindSettings {
  /** A source is never silent before this long without a report. */
  silenceFloorMs: number;
  /** …nor before this many of its usual gaps. */
  silenceFactor: number;
  /** A relay that polled once and not for this long stopped polling. */
  pollGapMs: number;
  /** A stop unacknowledged for this long. */
  stopGraceMs: number;
  /** An alert pending for this long means the outbox is backing up. */
  backlogMs: number;
}

/** A condition that holds now. */
export interface Condition {
  key: string;
  event: AlertEvent;
  subject: string;
  text: string;
  path: string | null;
  threshold?: number;
}

/**
 * The usual gap between a source's reports, learnt one gap at a time (an exponential average). A
 * gap that was itself a silence (longer than the allowance) teaches nothing: one night off must
 * not make the next silence go unnoticed for days.
 */
export function nextUsualGap(usualGapMs: number | null, gapMs: number, settings: BlindSettings): number | null {
  if (gapMs > silenceAllowanceMs(usualGapMs, settings)) return usualGapMs;
  return usualGapMs === null ? gapMs : Math.round(usualGapMs * 0.8 + gapMs * 0.2);
}

/** How long a source may be quiet before it counts as silent. */
export function silenceAllowanceMs(usualGapMs: number | null, settings: BlindSettings): number {
  return Math.max(settings.silenceFloorMs, settings.silenceFactor * (usualGapMs ?? 0));
}

/** Every condition that holds at `now`; `thresholds` are those the limit rules name. */
export function currentConditions(observed: Observations, settings: BlindSettings, thresholds: readonly number[], now: number): Condition[] {
  const conditions: Condition[] = [];
  for (const source of observed.sources) {
    if (source.lastSeenAt !== null) {
      const quiet = now - source.lastSeenAt;
      if (quiet > silenceAllowanceMs(source.usualGapMs, settings)) {
        const usual = source.usualGapMs === null ? "" : ` (it usually reports every ${humanDuration(source.usualGapMs)})`;
        conditions.push({ key: `source.silent:${source.id}`, event: "source.silent", subject: source.name, text: `Source ${source.name} silent for ${humanDuration(quiet)}${usual}`, path: "/sources" });
      }
    }
    if (source.lastPolledAt !== null && now - source.lastPolledAt > settings.pollGapMs) {
      conditions.push({ key: `relay.silent:${source.id}`, event: "relay.silent", subject: source.name, text: `The relay of ${source.name} stopped polling for directives ${humanDuration(now - source.lastPolledAt)} ago: stops cannot reach its agents`, path: "/sources" });
    }
  }
  for (const stop of observed.stops) {
    if (now - stop.createdAt <= settings.stopGraceMs) continue;
    conditions.push({ key: `stop.unacknowledged:${stop.id}`, event: "stop.unacknowledged", subject: stop.thread, text: `Nobody acknowledged the stop of ${stop.thread} (${stop.source}) for ${humanDuration(now - stop.createdAt)}`, path: `/threads/${encodeURIComponent(stop.thread)}` });
  }
  if (observed.oldestPendingAt !== null && now - observed.oldestPendingAt > settings.backlogMs) {
    conditions.push({ key: "outbox.backlog", event: "outbox.backlog", subject: "alert outbox", text: `Alerts have waited ${humanDuration(now - observed.oldestPendingAt)} to be delivered`, path: "/alerts" });
  }
  for (const threshold of new Set(thresholds)) {
    for (const limit of observed.limits) {
      if (limit.usedPercent === null || limit.usedPercent < threshold) continue;
      const name = [limit.source, limit.provider, limit.account, limit.window].filter(Boolean).join(" · ");
      conditions.push({ key: `limit.above:${threshold}:${limit.sourceId}|${limit.account}|${limit.provider}|${limit.window}`, event: "limit.above", subject: name, text: `Limit window ${name} at ${Math.round(limit.usedPercent)} % (alert at ${threshold} %)`, path: "/limits", threshold });
    }
  }
  return conditions;
}

export interface RaisedCondition {
  key: string;
  event: AlertEvent;
  subject: string;
  raisedAt: number;
}

/** Conditions that start now (raise one alert each) and raised ones that ended (clear each). */
export function conditionChanges(raised: readonly RaisedCondition[], current: readonly Condition[], now: number): { raise: Alert[]; clear: Alert[]; started: Condition[]; ended: string[] } {
  const was = new Map(raised.map((c) => [c.key, c]));
  const is = new Set(current.map((c) => c.key));
  const starting = current.filter((c) => !was.has(c.key));
  const ending = raised.filter((c) => !is.has(c.key));
  return {
    raise: starting.map((c) => ({ key: `${c.key}:raised@${now}`, event: c.event, state: "raised", subject: c.subject, text: c.text, at: iso(now), path: c.path, ...(c.threshold === undefined ? {} : { threshold: c.threshold }) })),
    clear: ending.map((c) => ({
      key: `${c.key}:cleared@${c.raisedAt}`,
      event: c.event,
      state: "cleared",
      subject: c.subject,
      text: `Cleared after ${humanDuration(now - c.raisedAt)}: ${ALERT_EVENT_LABELS[c.event].toLowerCase()} — ${c.subject}`,
      at: iso(now),
      path: null,
      ...thresholdOfKey(c),
    })),
    started: starting,
    ended: ending.map((c) => c.key),
  };
}

/** A limit condition's threshold is part of its key. */
function thresholdOfKey(c: RaisedCondition): { threshold?: number } {
  if (c.event !== "limit.above") return {};
  return { threshold: Number(c.key.split(":")[1]) };
}

/** A delivery check from an admin: says nothing about the radar's state. */
export function testAlert(destinationName: string, nowMs: number, nonce: string): Alert {
  return { key: `test:${nonce}`, event: "test", state: "fired", subject: destinationName, text: `Test alert from Retry Radar to ${destinationName}`, at: iso(nowMs), path: "/alerts" };
}
