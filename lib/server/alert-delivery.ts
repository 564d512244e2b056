import { alertBody } from "@/lib/alerts/body";
import { decideDelivery } from "@/lib/alerts/delivery";
import { conditionChanges, currentConditions, nextUsualGap, STALLED_ALERT_AFTER_MS, threadAlerts } from "@/lib/alerts/rules";
import { signAlert } from "@/lib/alerts/signature";
import { alertSettings, publicUrl } from "@/lib/config";
import { alertObservations, alertsNotQueued, dueAlerts, nextAlertDue, stalledThreads, type DueAlert } from "@/lib/db/alerts";
import { transaction } from "@/lib/db/unit-of-work";
import { postWebhook } from "./webhook";
import { shared } from "@/lib/process-state";

/**
 * The alert worker, in the server process like the watchdog: each pass judges the conditions
 * (a silent source, a relay that stopped polling, a stop nobody acknowledged, a backed-up outbox,
 * limit windows above a rule's threshold), raising or clearing each once, then delivers the
 * alerts that are due. Everything it needs is in the database, so it resumes after a restart; an
 * alert whose delivery was cut by a crash is sent again (receivers de-duplicate on its id).
 */
const PASS_MS = 1_000;
/** Deliveries per pass, sent together: a slow receiver holds back at most this many. */
const BATCH = 20;

export interface AlertWorkerDeps {
  now: () => number;
  post: typeof postWebhook;
}

const defaults: AlertWorkerDeps = { now: Date.now, post: postWebhook };

/** Raises and clears conditions as of `now`; returns how many alerts that wrote. */
export async function judgeConditions(now: number): Promise<number> {
  const { observed, learnt, thresholds, ruleEvents, raised } = await alertObservations();
  if (!ruleEvents.size && !raised.length) return 0;
  const { blind } = alertSettings();
  const learn: { sourceId: string; lastSeenAt: number; usualGapMs: number | null }[] = [];
  for (const source of observed.sources) {
    const before = learnt.get(source.id) ?? null;
    if (source.lastSeenAt === null || source.lastSeenAt === before) continue;
    if (before !== null && source.lastSeenAt > before) source.usualGapMs = nextUsualGap(source.usualGapMs, source.lastSeenAt - before, blind);
    learn.push({ sourceId: source.id, lastSeenAt: source.lastSeenAt, usualGapMs: source.usualGapMs });
  }
  // Only conditions some rule asks for are tracked: a rule added later raises what holds then.
  const current = currentConditions(observed, blind, thresholds, now).filter((c) => ruleEvents.has(c.event));
  // This worker is the only writer of raised conditions, so what it read still holds.
  const changes = conditionChanges(raised, current, now);
  // A stall is a fact, one alert each: only those not queued yet are written.
  const stalls = ruleEvents.has("thread.stalled") ? await alertsNotQueued(threadAlerts(await stalledThreads(now - STALLED_ALERT_AFTER_MS), now)) : [];
  const alerts = [...changes.raise, ...changes.clear, ...stalls];
  if (!learn.length && !alerts.length) return 0;
  return transaction(async (tx) => {
    for (const l of learn) await tx.learnSourceRhythm(l.sourceId, l.lastSeenAt, l.usualGapMs);
    for (const condition of changes.started) await tx.raiseCondition(condition, now);
    for (const key of changes.ended) await tx.clearCondition(key);
    return alerts.length ? await tx.enqueueAlerts(alerts, now) : 0;
  });
}

/** Sends one due alert and records the attempt (with its audit row). */
export async function deliver(due: DueAlert, deps: AlertWorkerDeps = defaults): Promise<void> {
  const settings = alertSettings();
  const body = alertBody(due.format, due.alert, due.id, publicUrl());
  const started = deps.now();
  const result = await deps.post(due.url, body, signAlert(due.secret, body, started), { allow: settings.allow, timeoutMs: settings.timeoutMs });
  const at = deps.now();
  const decision = decideDelivery(result, due.attempts + 1, at, settings.policy);
  await transaction(async (tx) =>
    tx.recordAlertAttempt({
      id: due.id,
      destination: due.destination,
      event: due.alert.event,
      at,
      status: result.status,
      error: decision.state === "failed" && !result.error ? decision.why : (result.error ?? null),
      durationMs: at - started,
      state: decision.state,
      nextAttemptAt: decision.state === "pending" ? decision.nextAttemptAt : at,
    }),
  );
}

/** One pass: conditions, then the alerts due. */
export async function alertPass(deps: AlertWorkerDeps = defaults): Promise<void> {
  await judgeConditions(deps.now());
  const due = await dueAlerts(deps.now(), BATCH);
  await Promise.all(due.map((alert) => deliver(alert, deps)));
}

const sharedForAlerts = shared<{ alerts?: NodeJS.Timeout }>("alerts", () => ({}));

export function startAlertDelivery(deps: AlertWorkerDeps = defaults): void {
  if (sharedForAlerts.alerts) return;
  const loop = async () => {
    let delay = PASS_MS;
    try {
      await alertPass(deps);
      const next = await nextAlertDue();
      if (next !== null) delay = Math.min(PASS_MS, Math.max(50, next - deps.now()));
    } catch (error) {
      process.stderr.write(`[radar] alert pass failed: ${(error as Error).message}\n`);
    }
    sharedForAlerts.alerts = setTimeout(loop, delay);
    sharedForAlerts.alerts.unref();
  };
  void loop();
}
