import type { TroubleKind } from "./types";

/**
 * Incidents: one wall hit by many threads is one incident. A pure fold over retry notices and
 * recoveries (clock passed in): the same inputs always give the same incidents, with the same ids.
 *
 * A scope is a kind plus where the wall is: the provider and model, or the source for usage
 * limits (a usage window belongs to an account, not to a model). An incident opens when at least
 * `minThreads` threads get notices in one scope within `windowMs`; it grows while notices keep
 * coming and closes after `quietMs` without one, or as soon as all its threads recovered.
 *
 * Thresholds are per source: a source may set its own `minThreads` and `windowMs` (absent: the
 * global settings). A scope that spans several sources (provider + model) follows the most
 * sensitive source whose threads are in it: it opens at the smallest `minThreads` and keeps
 * notices for the largest `windowMs` among them. So a source that asks to hear about two threads
 * is told about two threads, whoever else shares the wall, and the result depends only on which
 * sources are in the group, never on the order their notices came. A usage-limit scope is one
 * source, so that source's thresholds apply as they are.
 */

export interface IncidentSettings {
  minThreads: number;
  windowMs: number;
  quietMs: number;
}

export const DEFAULT_INCIDENT_SETTINGS: IncidentSettings = { minThreads: 3, windowMs: 2 * 60_000, quietMs: 5 * 60_000 };

/** A source's own thresholds; what it leaves out is the global setting. */
export type SourceIncidentSettings = Partial<Pick<IncidentSettings, "minThreads" | "windowMs">>;

/** Each source's own thresholds, by source id; a source not in it uses the global settings. */
export type IncidentSettingsBySource = ReadonlyMap<string, SourceIncidentSettings>;

/** A retry notice of one thread. */
export interface IncidentNotice {
  type: "notice";
  /** The thread's key (unique across sources). */
  thread: number;
  at: number;
  kind: TroubleKind;
  sourceId: string;
  provider: string | null;
  model: string | null;
  /** The window reset the notice named, when it named one. */
  resetAt?: number | null;
}

/** A thread that works again after its notices (its retry succeeded). */
export interface IncidentRecovery {
  type: "recovered";
  thread: number;
  at: number;
}

export type IncidentInput = IncidentNotice | IncidentRecovery;

export interface IncidentThread {
  thread: number;
  /** The source of its notices: its thresholds count for the scope (absent on older records: the global ones). */
  sourceId?: string;
  firstNoticeAt: number;
  lastNoticeAt: number;
  notices: number;
  recoveredAt: number | null;
}

export type IncidentState = "forming" | "open" | "closed";

export interface IncidentScope {
  kind: TroubleKind;
  provider: string | null;
  model: string | null;
  /** Set for usage limits only: their wall is the source's account. */
  sourceId: string | null;
}

export interface IncidentRecord extends IncidentScope {
  /** Stable: the scope and the first notice's time. A forming group's id is `forming:` + its scope. */
  id: string;
  state: IncidentState;
  startedAt: number;
  lastNoticeAt: number;
  /** When it ended: its last notice (quiet) or its last recovery; null while it is not closed. */
  endedAt: number | null;
  closedBy: "quiet" | "recovered" | null;
  notices: number;
  resetAt: number | null;
  threads: IncidentThread[];
}

export interface IncidentStep {
  /** Every incident not closed after the step, forming groups included. */
  active: IncidentRecord[];
  /** Incidents to save: opened, grown or closed by the step, and forming groups that changed. */
  changed: IncidentRecord[];
  /** Ids of forming groups that are gone (opened under their own id, or their notices aged out). */
  removed: string[];
}

export function scopeOf(notice: Pick<IncidentNotice, "kind" | "sourceId" | "provider" | "model">): IncidentScope {
  if (notice.kind === "usage_limit") return { kind: notice.kind, provider: null, model: null, sourceId: notice.sourceId };
  return { kind: notice.kind, provider: notice.provider ?? null, model: notice.model ?? null, sourceId: null };
}

export function scopeKey(scope: IncidentScope): string {
  return scope.sourceId !== null ? `${scope.kind}|source|${scope.sourceId}` : `${scope.kind}|${scope.provider ?? ""}|${scope.model ?? ""}`;
}

/** Stable and short: FNV-1a of the scope and start, so a permalink survives a rebuild. */
export function incidentId(scope: IncidentScope, startedAt: number): string {
  let hash = 0x811c9dc5;
  for (const char of `${scopeKey(scope)}@${startedAt}`) {
    hash ^= char.charCodeAt(0);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `inc-${startedAt.toString(36)}-${hash.toString(36)}`;
}

/**
 * Applies inputs (in time order) to the active incidents, then closes what `now` ends. `active`
 * is what the previous step returned (forming and open incidents).
 */
export function advanceIncidents(
  active: IncidentRecord[],
  inputs: IncidentInput[],
  now: number,
  settings: IncidentSettings,
  bySource: IncidentSettingsBySource = new Map(),
): IncidentStep {
  const thresholds = (incident: IncidentRecord) => scopeThresholds(incident, settings, bySource);
  const byScope = new Map<string, IncidentRecord>();
  for (const incident of active) byScope.set(scopeKey(incident), clone(incident));
  const changed = new Map<string, IncidentRecord>();
  const removed = new Set<string>();
  const closed: IncidentRecord[] = [];

  const close = (key: string, incident: IncidentRecord, endedAt: number, by: "quiet" | "recovered") => {
    incident.state = "closed";
    incident.endedAt = endedAt;
    incident.closedBy = by;
    byScope.delete(key);
    changed.set(incident.id, incident);
    closed.push(incident);
  };
  /** Ends what is over by `at`: open incidents quiet for long enough, forming notices out of the window. */
  const expire = (at: number) => {
    for (const [key, incident] of byScope) {
      if (incident.state === "open" && at - incident.lastNoticeAt >= settings.quietMs) close(key, incident, incident.lastNoticeAt, "quiet");
      else if (incident.state === "forming") {
        const { windowMs } = thresholds(incident);
        const kept = incident.threads.filter((t) => at - t.lastNoticeAt < windowMs);
        if (kept.length === incident.threads.length) continue;
        if (kept.length === 0) {
          byScope.delete(key);
          changed.delete(incident.id);
          removed.add(incident.id);
        } else {
          incident.threads = kept;
          incident.notices = kept.reduce((sum, t) => sum + t.notices, 0);
          incident.startedAt = Math.min(...kept.map((t) => t.firstNoticeAt));
          changed.set(incident.id, incident);
        }
      }
    }
  };

  for (const input of [...inputs].sort((a, b) => a.at - b.at)) {
    expire(input.at);
    if (input.type === "recovered") {
      for (const [key, incident] of byScope) {
        const member = incident.threads.find((t) => t.thread === input.thread);
        if (!member || member.recoveredAt !== null || input.at < member.lastNoticeAt) continue;
        member.recoveredAt = input.at;
        changed.set(incident.id, incident);
        if (incident.state === "open" && incident.threads.every((t) => t.recoveredAt !== null)) close(key, incident, input.at, "recovered");
      }
      continue;
    }
    const scope = scopeOf(input);
    const key = scopeKey(scope);
    let incident = byScope.get(key);
    if (!incident) {
      incident = { ...scope, id: `forming:${key}`, state: "forming", startedAt: input.at, lastNoticeAt: input.at, endedAt: null, closedBy: null, notices: 0, resetAt: null, threads: [] };
      removed.delete(incident.id);
      byScope.set(key, incident);
    }
    let member = incident.threads.find((t) => t.thread === input.thread);
    if (!member) {
      member = { thread: input.thread, sourceId: input.sourceId, firstNoticeAt: input.at, lastNoticeAt: input.at, notices: 0, recoveredAt: null };
      incident.threads.push(member);
    }
    member.notices++;
    member.lastNoticeAt = Math.max(member.lastNoticeAt, input.at);
    // A relapse: the thread is in trouble again.
    member.recoveredAt = null;
    incident.notices++;
    incident.lastNoticeAt = Math.max(incident.lastNoticeAt, input.at);
    incident.startedAt = Math.min(incident.startedAt, input.at);
    if (input.resetAt != null) incident.resetAt = Math.max(incident.resetAt ?? 0, input.resetAt);
    if (incident.state === "forming" && incident.threads.length >= thresholds(incident).minThreads) {
      changed.delete(incident.id);
      removed.add(incident.id);
      incident.state = "open";
      incident.id = incidentId(scope, incident.startedAt);
    }
    changed.set(incident.id, incident);
  }
  expire(now);
  return { active: [...byScope.values()], changed: [...changed.values()], removed: [...removed] };
}

/** Folds every input from nothing: the incidents they make, opened and closed, in start order. */
export function detectIncidents(
  inputs: IncidentInput[],
  now: number,
  settings: IncidentSettings = DEFAULT_INCIDENT_SETTINGS,
  bySource: IncidentSettingsBySource = new Map(),
): IncidentRecord[] {
  const all = new Map<string, IncidentRecord>();
  let active: IncidentRecord[] = [];
  // One input per step, as live ingestion would see them: the result does not depend on batching.
  for (const input of [...inputs].sort((a, b) => a.at - b.at)) {
    const step = advanceIncidents(active, [input], input.at, settings, bySource);
    for (const incident of step.changed) all.set(incident.id, incident);
    for (const id of step.removed) all.delete(id);
    active = step.active;
  }
  const last = advanceIncidents(active, [], now, settings, bySource);
  for (const incident of last.changed) all.set(incident.id, incident);
  for (const id of last.removed) all.delete(id);
  return [...all.values()].filter((i) => i.state !== "forming").sort((a, b) => a.startedAt - b.startedAt || a.id.localeCompare(b.id));
}

/**
 * Time the incident cost its threads: each thread from its first notice to its recovery, or to
 * the incident's end (now while it is open).
 */
export function incidentTimeLostMs(incident: Pick<IncidentRecord, "threads" | "endedAt">, now: number): number {
  const end = incident.endedAt ?? now;
  return incident.threads.reduce((sum, t) => sum + Math.max(0, (t.recoveredAt ?? end) - t.firstNoticeAt), 0);
}

/**
 * The thresholds of a scope: the smallest `minThreads` and the largest `windowMs` among the
 * sources of its threads, each source's own setting or else the global one.
 */
export function scopeThresholds(incident: Pick<IncidentRecord, "threads">, settings: IncidentSettings, bySource: IncidentSettingsBySource): IncidentSettings {
  if (incident.threads.length === 0) return settings;
  let minThreads = Infinity;
  let windowMs = 0;
  for (const { sourceId } of incident.threads) {
    const own = sourceId === undefined ? undefined : bySource.get(sourceId);
    minThreads = Math.min(minThreads, own?.minThreads ?? settings.minThreads);
    windowMs = Math.max(windowMs, own?.windowMs ?? settings.windowMs);
  }
  return { ...settings, minThreads, windowMs };
}

function clone(incident: IncidentRecord): IncidentRecord {
  return { ...incident, threads: incident.threads.map((t) => ({ ...t })) };
}
