import { advanceIncidents, classify, initialThreadState, minuteOnlyResetRange, reduce, tick, tickOnTime } from "@/lib/retry";
import type { IncidentInput, IncidentNotice, AppliedStep, DirectiveIntent, EpisodeRecord, RadarEvent, StepResult, ThreadSettings, ThreadState } from "@/lib/retry";
import type { EngineReach } from "@/lib/threads/control";
import { SERVER_FORMAT, type NormalizedEvent, type NormalizedLine } from "@/lib/ingest/types";
import type { SourceRecord } from "@/lib/db/sources";
import type { StoredThread } from "@/lib/db/thread-state";
import type { TurnRow } from "@/lib/db/episodes";
import { andThen, failedInCommitStep, transaction, type Awaitable, type CommitStep, type Tx } from "@/lib/db/unit-of-work";
import { isStoreFailure } from "@/lib/db/store-failure";
import { config, incidentSettings } from "@/lib/config";
import { isStoppable } from "@/lib/threads/statuses";
import { incidentAlerts, threadAlerts, type ThreadTransition } from "@/lib/alerts/rules";
import { publishDirectivesPending, publishIncidentsChanged, publishLimitsChanged, publishThreadChanges, type ThreadChange } from "./bus";
import { shared } from "@/lib/process-state";

/**
 * The middle of the data path: normalized lines → reduce → persist, inside one unit of work
 * (lib/db/unit-of-work.ts: every store call awaited through its Tx), then publish. The engine
 * (lib/retry) decides; this module only feeds it events in order, saves the state it returns and
 * carries out its effects (episodes to write, directives to send).
 */

/** Directives for moments further in the past than this are recorded as expired, not sent. */
const DIRECTIVE_MAX_AGE_MS = 5 * 60_000;

/**
 * A source's clock may run ahead of the server's a little; an event dated further ahead of its
 * receive time than this is recorded at its receive time (the original time stays in the raw
 * payload and the event is flagged), so one wrong clock can neither make every later event "out
 * of order" nor push the thread's deadlines into the future.
 */
export const MAX_CLOCK_AHEAD_MS = 5 * 60_000;

/** Threads per unit of work for actions over many threads (Stop all, a policy change). */
export const THREADS_PER_UNIT = 100;

/** When this process could first hear its sources: interrupts pending from before get a full grace from here. */
const SERVER_STARTED_AT = Date.now();

interface WorkingThread extends StoredThread {
  sourceId: string;
  /** An event older than what the state has seen arrived: rebuild from all events at the end. */
  needsReplay: boolean;
  changed: boolean;
  /** Episodes changed in this unit of work, by seq: each is written once, when it finishes. */
  episodes: Map<number, EpisodeRecord>;
  /** The status before this unit of work; null for a thread it created. */
  statusBefore: string | null;
  /** Kinds of the retry notices this unit of work stored, counted as seen under the thread's saved labels. */
  noticesSeen: string[];
  /**
   * Whether a line of this unit of work joined its paths (lib/db/thread-join.ts). `joinedTo` is
   * then up to date; a joined thread's notices feed no incident.
   */
  pathsJoined: boolean;
  /** Ids of the retry notices this unit of work stored, whose rollup facts are added when it finishes. */
  noticeIds: number[];
}

export interface BatchOutcome {
  accepted: number;
  duplicates: number;
  /** Internal ids of the threads this batch touched. */
  threadIds: number[];
  /** Directives created by this batch (possibly on other threads, through a cascade). */
  newDirectives: number;
}

/** What is stored with an event beside its normalized form: its key, its format and what arrived. */
type EventMeta = { key: string; format: string; nativeType: string | null; raw: unknown; rawJson?: string; receivedAt: number; clampedFrom?: number };

/**
 * One unit of work: a request's batch, an operator action or a watchdog pass.
 *
 * Promises per event: on the listener's thread, Next's AsyncLocalStorage instances make Node 20
 * (what this project runs on) run a hook for every promise created, so the path each event takes
 * awaits only what may really wait (a store call of PostgreSQL, a directive to send), not what
 * this unit of work already holds or SQLite answered at once: an event's steps answer
 * `Awaitable`s chained by `andThen`, a promise only where one of them had to wait. A batch of 500
 * went from 8,480 promises to 2,580 (scripts/profile-ingest.ts inside an AsyncLocalStorage:
 * 19–24 → 17–17.5 ms per batch); storing and applying an event then stopped making any on SQLite
 * (each event of a batch adds 0.2 instead of 4.2 in pipeline.test.ts, "the cost of an event";
 * `profile-ingest.ts --async-context`: 19.8–21.3 → 18.3–18.8 ms).
 */
class Batch {
  private readonly threads = new Map<number, WorkingThread>();
  private readonly bySourceKey = new Map<string, WorkingThread>();
  private readonly reaches = new Map<string, EngineReach>();
  newDirectives = 0;
  private readonly directiveSources = new Set<string>();
  /** A usage window got a snapshot in this unit of work. */
  limitsChanged = false;
  /** Retry notices and recoveries for the incident detector, in the order they were applied. */
  readonly incidentInputs: IncidentInput[] = [];
  /** Turns this unit of work saw, by thread and turn id (see turn()). */
  private readonly turns = new Map<string, TurnRow>();
  /** Threads a join of this unit of work changed (see joinPaths). */
  private readonly joinedNow = new Set<number>();

  /**
   * Set for batches of historical lines (an import, a relay catching up on hours-old output):
   * directives for moments long past are then recorded `expired` instead of sent. Never for the
   * watchdog, operator actions or live ingestion, whose directives are always sent.
   */
  expireStale = false;

  constructor(
    private readonly tx: Tx,
    private readonly now: number,
  ) {}

  /** The thread this unit of work already holds, without a promise (see "Promises per event" above). */
  known(source: SourceRecord, externalId: string): WorkingThread | undefined {
    return this.bySourceKey.get(`${source.id}\0${externalId}`);
  }

  async thread(source: SourceRecord, externalId: string): Promise<WorkingThread> {
    const cached = this.known(source, externalId);
    if (cached) return cached;
    const found = await this.tx.findThread(source.id, externalId);
    if (found) return this.withReach(this.remember(source.id, found, found.state.status));
    return this.withReach(this.remember(source.id, await this.tx.createThread(source.id, externalId, newThreadState(externalId, source), this.now), null));
  }

  /** Names ahead the threads of the lines that will be applied (see expectThreads in lib/db/thread-state.ts). */
  async expectThreads(source: SourceRecord, lines: NormalizedLine[], storedKeys: Set<string>): Promise<void> {
    const ids = new Set<string>();
    for (const line of lines) {
      const threadId = line.event?.threadId;
      if (threadId && !storedKeys.has(line.idempotencyKey) && !this.bySourceKey.has(`${source.id}\0${threadId}`)) ids.add(threadId);
    }
    if (ids.size) await this.tx.expectThreads(source.id, [...ids]);
  }

  async threadById(id: number): Promise<WorkingThread | null> {
    const cached = this.threads.get(id);
    if (cached) return cached;
    const stored = await this.tx.threadById(id);
    return stored ? this.withReach(this.remember(stored.sourceId, stored, stored.state.status)) : null;
  }

  /**
   * Tells the engine what the thread's source can carry out today (its relay may have announced
   * since), so it asks nothing nobody can receive. Absent when it can do both, as for every
   * thread before sources announced anything.
   */
  private async withReach(thread: WorkingThread): Promise<WorkingThread> {
    thread.state = { ...thread.state, settings: await this.settingsWithReach(thread.sourceId, thread.state.settings) };
    return thread;
  }

  private async settingsWithReach(sourceId: string, settings: ThreadSettings): Promise<ThreadSettings> {
    let reach = this.reaches.get(sourceId);
    if (!reach) this.reaches.set(sourceId, (reach = await this.tx.sourceReach(sourceId)));
    const rest = withoutReach(settings);
    return reach.interrupt && reach.continue ? rest : { ...rest, reach };
  }

  /**
   * Before a source's line is applied: joins the threads two paths make of one agent thread
   * (lib/db/thread-join.ts), once per thread and unit of work. A join reorders the board: the
   * joined thread leaves it, the thread it joined names one more path.
   */
  async joinPaths(thread: WorkingThread, format: string): Promise<void> {
    if (thread.pathsJoined) return;
    thread.pathsJoined = true;
    const { joinedTo, changed } = await this.tx.joinPaths(thread, format);
    thread.joinedTo = joinedTo;
    for (const id of changed) this.joinedNow.add(id);
  }

  private remember(sourceId: string, stored: StoredThread, statusBefore: string | null): WorkingThread {
    const working: WorkingThread = { ...stored, sourceId, needsReplay: false, pathsJoined: false, changed: false, episodes: new Map(), statusBefore, noticesSeen: [], noticeIds: [] };
    this.threads.set(working.id, working);
    this.bySourceKey.set(`${sourceId}\0${working.externalId}`, working);
    return working;
  }

  /**
   * Stores one event of a thread and applies it, unless it must wait for a replay. Answers how
   * the engine applied it (null when it waits for the replay), now unless something had to wait.
   */
  apply(
    thread: WorkingThread,
    event: NormalizedEvent,
    meta: EventMeta,
  ): Awaitable<AppliedStep | null> {
    thread.changed = true;
    const range = this.windowResetRange(thread, event);
    return range ? this.withWindowReset(thread, event, range).then((reset) => this.store(thread, reset, meta)) : this.store(thread, event, meta);
  }

  /** Stores an event, as a row of its own or folded into the thread's open progress row, then applies it (see apply). */
  private store(thread: WorkingThread, event: NormalizedEvent, meta: EventMeta): Awaitable<AppliedStep | null> {
    const inOrder = !thread.needsReplay && (thread.state.lastEventAt == null || event.at >= thread.state.lastEventAt);
    // Fold only into the progress row that is still the thread's last applied event, and only in
    // order: a folded row then spans a stretch of pure progress, which a replay reproduces.
    const foldInto =
      event.type === "progress" && inOrder && thread.openProgressEventId !== null && thread.state.lastSeq === thread.openProgressEventId
        ? thread.openProgressEventId
        : null;
    if (foldInto !== null) {
      const folding = this.tx.foldProgress(thread.sourceId, foldInto, meta.key, event.progressCount ?? 1, event.lastAt ?? event.at);
      return andThen(folding, () => this.applyStored(thread, event, foldInto, null));
    }
    let notice: IncidentNotice | null = null;
    const kind = event.error ? classify(event.error).kind : null;
    if (event.type === "retry" && !thread.joinedTo) {
      thread.noticesSeen.push(kind ?? "other");
      notice = {
        type: "notice",
        thread: thread.id,
        at: event.at,
        kind: kind ?? "other",
        sourceId: thread.sourceId,
        provider: event.provider ?? thread.state.provider,
        model: event.model ?? thread.state.model,
      };
      this.incidentInputs.push(notice);
    }
    const inserted = this.tx.insertEvent({
      sourceId: thread.sourceId,
      threadId: thread.id,
      idempotencyKey: meta.key,
      format: meta.format,
      nativeType: meta.nativeType,
      event,
      kind,
      receivedAt: meta.receivedAt,
      raw: meta.raw,
      rawJson: meta.rawJson,
      clampedFrom: meta.clampedFrom,
    });
    return andThen(inserted, (seq) => {
      if (event.type === "retry") thread.noticeIds.push(seq);
      thread.openProgressEventId = event.type === "progress" && inOrder ? seq : null;
      return this.applyStored(thread, event, seq, notice);
    });
  }

  /** Applies a stored event (`seq`, its row), unless the thread waits for a replay or the event is late and starts one. */
  private applyStored(thread: WorkingThread, event: NormalizedEvent, seq: number, notice: IncidentNotice | null): Awaitable<AppliedStep | null> {
    if (thread.needsReplay) return null;
    if (thread.state.lastEventAt != null && event.at < thread.state.lastEventAt) {
      thread.needsReplay = true;
      return null;
    }
    return andThen(this.step(thread, { ...event, seq }, seq), (applied) => {
      // The reset the engine read from the notice, when it named one.
      if (notice) notice.resetAt = thread.state.retry?.resetAt ?? null;
      return applied;
    });
  }

  /**
   * An error that names its reset only to the minute ("try again at 9:29 AM") carries the exact
   * reset the source reported for that minute in a usage window of its own (a relay sends Codex's
   * account/rateLimits/updated apart from the error): without it the radar would resume at the
   * minute's start, seconds before the window resets. See minuteOnlyResetRange. Only a window
   * stored before the event is found: a line's windows are stored after its event, and a window
   * reported after the error (or since replaced by a later snapshot) is not looked for again.
   */
  private windowResetRange(thread: WorkingThread, event: NormalizedEvent): { from: number; to: number } | null {
    // A late event is replayed from a state that has not remembered what the thread remembers now.
    const late = thread.state.lastEventAt != null && event.at < thread.state.lastEventAt;
    return minuteOnlyResetRange(event.error, event.at, late ? null : thread.state.windowReset);
  }

  private async withWindowReset(thread: WorkingThread, event: NormalizedEvent, range: { from: number; to: number }): Promise<NormalizedEvent> {
    const provider = event.provider ?? thread.state.provider ?? null;
    const windowResetAt = await this.tx.windowResetBetween(thread.sourceId, { externalId: thread.externalId, provider }, range.from, range.to);
    return windowResetAt === null ? event : { ...event, windowResetAt };
  }

  /**
   * Deadlines that passed before `event.at` are applied first, then the event itself. reduce()
   * would fire them too, but ticking separately lets every episode a timer ends be saved before
   * the event may start the next one.
   */
  private step(thread: WorkingThread, event: RadarEvent, eventId: number | null): Awaitable<AppliedStep | null> {
    return andThen(this.advance(thread, event.at), () => {
      const before = thread.state;
      const after = reduce(before, event, event.at);
      // The turn's row is kept in memory until finish: noting it first changes nothing stored.
      if (event.turnId && event.type.startsWith("turn.")) {
        this.turn(thread.id, event.turnId, TURN_STATUS[event.type] ?? "running", event.at, event.type === "turn.started" ? null : event.at);
      }
      const marking = eventId !== null && after.effects.applied?.late ? () => this.tx.markLate(eventId, true) : () => undefined;
      return andThen(andThen(this.record(thread, before, after), marking), () => after.effects.applied);
    });
  }

  /**
   * A turn's row is written once per unit of work, when it finishes: as the upserts of each of
   * its events in turn would leave it (the first one's start, the last one's status and end).
   */
  private turn(threadId: number, turnId: string, status: string, startedAt: number, endedAt: number | null) {
    const key = `${threadId}\0${turnId}`;
    const known = this.turns.get(key);
    if (known) Object.assign(known, { status, endedAt });
    else this.turns.set(key, { threadId, turnId, status, startedAt, endedAt });
  }

  /**
   * Fires the timers due by `until` as an on-time watchdog did (see tickOnTime). Answers a
   * promise only when a timer was due (see "Promises per event" above).
   */
  private advance(thread: WorkingThread, until: number): Awaitable<void> {
    const steps: [ThreadState, StepResult][] = [];
    tickOnTime(thread.state, until, (before, after) => steps.push([before, after]), this.reachableSince());
    if (steps.length) return this.recordSteps(thread, steps);
  }

  private async recordSteps(thread: WorkingThread, steps: readonly [ThreadState, StepResult][]) {
    for (const [before, after] of steps) await this.record(thread, before, after);
  }

  /** Historical batches pass no start time: their interrupts were never deliverable. */
  private reachableSince(): number | undefined {
    return this.expireStale ? undefined : SERVER_STARTED_AT;
  }

  /**
   * Catches a live thread up with the clock: every timer due by `this.now` fires at its own time,
   * and what it asks of a source is requested now, when it can first be delivered (a watchdog
   * pass after downtime, a blocked event loop, a slow start). One tick ends at most one episode
   * (only events start them). A thread rebuilt by a replay was ticked on time instead, as the
   * live server did before the late event arrived.
   */
  private async catchUp(thread: WorkingThread) {
    const wakeAt = thread.state.wakeAt;
    if (wakeAt == null || wakeAt > this.now) return;
    const before = thread.state;
    await this.record(thread, before, tick(before, this.now, this.reachableSince()));
  }

  /**
   * Keeps a step's state and carries out its effects: episodes to write, directives to send.
   * Answers a promise only when there are directives to send (see "Promises per event" above).
   */
  private record(thread: WorkingThread, before: ThreadState, { state: after, effects }: StepResult): Awaitable<void> {
    thread.state = after;
    thread.changed = true;
    if (effects.endedEpisode) {
      thread.episodes.set(effects.endedEpisode.seq, effects.endedEpisode);
      if (effects.endedEpisode.outcome === "recovered" && !thread.joinedTo) this.incidentInputs.push({ type: "recovered", thread: thread.id, at: effects.endedEpisode.endedAt ?? this.now });
    }
    if (after.episode && after.episode !== before.episode) thread.episodes.set(after.episode.seq, after.episode);
    if (effects.directives.length) return this.directives(thread, effects.directives);
  }

  private async directives(thread: WorkingThread, intents: readonly DirectiveIntent[]) {
    for (const intent of intents) await this.directive(thread, intent);
  }

  private async directive(thread: WorkingThread, intent: DirectiveIntent) {
    const id = await this.tx.insertDirective(thread.sourceId, thread.id, intent, this.now);
    // Already recorded (a replay re-emits it): sent, and cascaded, once.
    if (!id) return;
    if (this.expireStale && this.now - intent.dueAt > DIRECTIVE_MAX_AGE_MS) await this.tx.expireDirective(id, this.now);
    else {
      this.newDirectives++;
      this.directiveSources.add(thread.sourceId);
    }
    if (intent.cascade && intent.kind === "interrupt") {
      for (const child of await this.activeChildren(thread)) {
        await this.internal(child, {
          type: "stop.requested",
          at: intent.at,
          threadId: child.externalId,
          actor: intent.origin === "operator" ? "operator (via parent)" : "policy",
          reason: `parent thread ${thread.externalId}: ${intent.reason}`,
        });
      }
    }
  }

  /**
   * The children of a thread that still run, by their current state: stored children and those
   * this unit of work created or changed (not saved yet).
   */
  private async activeChildren(parent: WorkingThread): Promise<WorkingThread[]> {
    for (const id of await this.tx.childThreadIds(parent.sourceId, parent.externalId)) await this.threadById(id);
    return [...this.threads.values()].filter(
      (t) => t.sourceId === parent.sourceId && t.state.parentThreadId === parent.externalId && isStoppable(t.state.status),
    );
  }

  /** A server-originated event (stop, acknowledgement, settings): stored like any other, then applied. */
  internal(thread: WorkingThread, event: Omit<NormalizedEvent, "seq">): Awaitable<AppliedStep | null> {
    return this.apply(thread, event, {
      key: `radar:${crypto.randomUUID()}`,
      format: SERVER_FORMAT,
      nativeType: null,
      raw: { origin: "radar", ...event },
      receivedAt: this.now,
    });
  }

  /**
   * Ends the unit of work: replays what arrived out of order, catches up with the clock, saves.
   * Returns the threads it changed, each marked `reorder` when it is new or its status changed.
   */
  async finish(): Promise<ThreadChange[]> {
    // Rollup facts are written once per unit of work, each under the labels its thread has when
    // it is added: notices of threads that already have facts go in now (saveThread moves them
    // with the rest when the labels change); episodes, and the notices of threads created here,
    // go in once every thread is saved, so no fact is ever written under labels it never had.
    const threads = [...this.threads.values()];
    const episodes: { threadId: number; episode: EpisodeRecord }[] = [];
    await this.tx.noticeFacts(threads.flatMap((thread) => (thread.labels === null ? [] : thread.noticeIds.splice(0))));
    for (const thread of threads) {
      if (thread.needsReplay) {
        await this.replay(thread);
        await this.advance(thread, this.now);
      } else await this.catchUp(thread);
      if (thread.state.wakeAt != null && thread.state.wakeAt <= this.now) {
        // The engine asked to be woken in the past even after ticking: never let the watchdog spin on it.
        process.stderr.write(`[radar] thread ${thread.externalId}: wake time did not advance; watchdog stops ticking it\n`);
        thread.state = { ...thread.state, wakeAt: null };
        thread.changed = true;
      }
      if (!thread.changed) continue;
      await this.tx.saveThread(thread, this.now);
      for (const episode of thread.episodes.values()) episodes.push({ threadId: thread.id, episode });
      thread.episodes.clear();
      if (thread.noticesSeen.length) await this.tx.noticesSeen(thread.id, thread.noticesSeen.splice(0));
    }
    await this.tx.saveEpisodes(episodes);
    await this.tx.saveTurns([...this.turns.values()]);
    this.turns.clear();
    await this.tx.noticeFacts(threads.flatMap((thread) => thread.noticeIds.splice(0)));
    const changes = threads
      .filter((t) => t.changed)
      .map((t) => ({ key: t.id, reorder: t.statusBefore === null || t.statusBefore !== t.state.status || this.joinedNow.has(t.id) }));
    for (const key of this.joinedNow) if (!this.threads.has(key)) changes.push({ key, reorder: true });
    return changes;
  }

  private async replay(thread: WorkingThread) {
    await this.tx.deleteEpisodes(thread.id);
    thread.episodes.clear();
    thread.state = { ...initialThreadState(thread.externalId), settings: await this.settingsWithReach(thread.sourceId, thread.initialSettings) };
    thread.needsReplay = false;
    for (const event of await this.tx.threadEvents(thread.id)) {
      await this.tx.markLate(event.seq, false);
      await this.step(thread, event, event.seq);
    }
  }

  published(): string[] {
    return [...this.directiveSources];
  }

  /** Threads whose status this unit of work changed (alert rules on stalled, exhausted, broken). */
  transitions(): ThreadTransition[] {
    return [...this.threads.values()]
      .filter((t) => t.changed && t.statusBefore !== t.state.status)
      .map((t) => ({ key: t.id, externalId: t.externalId, title: t.state.title, statusBefore: t.statusBefore, status: t.state.status, lastSeq: t.state.lastSeq ?? 0 }));
  }
}

function withoutReach({ reach: _reach, ...settings }: ThreadSettings): ThreadSettings {
  return settings;
}

const TURN_STATUS: Record<string, string> = {
  "turn.started": "running",
  "turn.completed": "completed",
  "turn.failed": "failed",
  "turn.interrupted": "interrupted",
};

function newThreadState(externalId: string, source: SourceRecord): ThreadState {
  const base = initialThreadState(externalId);
  return {
    ...base,
    settings: {
      ...base.settings,
      policy: source.policy ?? base.settings?.policy ?? null,
      capacityRecovery: source.capacityRecovery,
      resumeAtReset: source.resumeAtReset,
      // Deployment overrides of the engine's graces.
      stopGraceMs: config().RADAR_STOP_GRACE_MS,
      graceMs: config().RADAR_POLICY_GRACE_MS,
    },
  };
}

/**
 * Runs one unit of work in a transaction and publishes what changed only after it committed.
 * `settle` runs after the batch finished, inside the same transaction (an audit row that states
 * the thread's final status commits with it).
 */
async function runBatch(
  now: number,
  work: (batch: Batch, tx: Tx) => Promise<void>,
  settle?: (tx: Tx) => Promise<void>,
): Promise<{ threadIds: number[]; batch: Batch }> {
  const { changes, batch, incidents } = await transaction(async (tx, atCommit) => {
    const batch = new Batch(tx, now);
    await work(batch, tx);
    const changes = await batch.finish();
    const incidents: IncidentsAtCommit = { inputs: batch.incidentInputs, now, changed: false };
    if (incidents.inputs.length) atCommit(INCIDENTS_AT_COMMIT, incidents);
    await settle?.(tx);
    // Alerts commit with the facts that raised them (the outbox delivers them later).
    const alerts = threadAlerts(batch.transitions(), now);
    if (alerts.length) await tx.enqueueAlerts(alerts, now);
    return { changes, batch, incidents };
  });
  publishThreadChanges(changes, now);
  if (incidents.changed) publishIncidentsChanged(now);
  if (batch.limitsChanged) publishLimitsChanged(now);
  for (const sourceId of batch.published()) publishDirectivesPending(sourceId);
  return { threadIds: changes.map((change) => change.key), batch };
}

/**
 * Folds notices and recoveries into the incidents, in the commit that stored them
 * (INCIDENTS_AT_COMMIT) or the watchdog pass that found incidents quiet for long enough. Returns
 * whether an open or closed incident changed (forming groups are not shown).
 */
async function updateIncidents(tx: Tx, inputs: IncidentInput[], now: number): Promise<boolean> {
  const active = await tx.activeIncidents();
  const step = advanceIncidents(active, inputs, now, incidentSettings(), await tx.sourceIncidentSettings());
  for (const id of step.removed) await tx.deleteIncident(id);
  for (const incident of step.changed) await tx.saveIncident(incident);
  const openBefore = new Set(active.filter((incident) => incident.state === "open").map((incident) => incident.id));
  const sources = step.changed.flatMap((incident) => (incident.sourceId === null ? [] : [incident.sourceId]));
  const alerts = incidentAlerts(openBefore, step.changed, now, sources.length ? await tx.sourceNames(sources) : undefined);
  if (alerts.length) await tx.enqueueAlerts(alerts, now);
  return step.changed.some((incident) => incident.state !== "forming");
}

/** A unit of work's notices and recoveries for the incidents, and whether the commit changed one. */
interface IncidentsAtCommit {
  inputs: IncidentInput[];
  now: number;
  changed: boolean;
}

/**
 * The incidents are folded once per commit, with the notices and recoveries of every unit of work
 * in it: each fold saves a changed incident's whole thread list (thousands of threads in a
 * provider's outage), so under many small requests folding once per group commit instead of once
 * per unit of work divides that cost by the group's size (scripts/profile-incident.ts --clients 8).
 */
const INCIDENTS_AT_COMMIT: CommitStep<IncidentsAtCommit> = {
  async run(tx, units) {
    const changed = await updateIncidents(tx, units.flatMap((unit) => unit.inputs), Math.max(...units.map((unit) => unit.now)));
    for (const unit of units) unit.changed = changed;
  },
};

/**
 * The watchdog's incident pass: closes incidents quiet for long enough. Through the commit step, as
 * ingestion's notices: a notice in the same group commit is folded with it, in time order, so an
 * incident it keeps open is never closed first.
 */
export async function closeQuietIncidents(now = Date.now()): Promise<void> {
  const incidents: IncidentsAtCommit = { inputs: [], now, changed: false };
  await transaction(async (_tx, atCommit) => atCommit(INCIDENTS_AT_COMMIT, incidents));
  if (incidents.changed) publishIncidentsChanged(now);
}

/**
 * Ingests normalized lines from one source: one transaction, then publication. `otlp` marks an
 * OpenTelemetry export, recorded on the source in the same transaction (even when it stores nothing).
 */
export async function ingestLines(source: SourceRecord, given: NormalizedLine[], now = Date.now(), options: { otlp?: boolean } = {}): Promise<BatchOutcome> {
  const lines = given.map(clampClockAhead);
  let accepted = 0;
  let duplicates = 0;
  const { threadIds, batch } = await runBatch(now, async (batch, tx) => {
    batch.expireStale = lines.length > 0 && lines.every((line) => (line.event?.at ?? now) < now - DIRECTIVE_MAX_AGE_MS);
    // Keys stored before this batch, asked once; a key repeated within the batch counts once too.
    const storedKeys = await tx.storedKeys(source.id, lines.map((line) => line.idempotencyKey));
    await batch.expectThreads(source, lines, storedKeys);
    const seenKeys = new Set<string>();
    for (const line of lines) {
      if (seenKeys.has(line.idempotencyKey) || storedKeys.has(line.idempotencyKey)) {
        duplicates++;
        continue;
      }
      seenKeys.add(line.idempotencyKey);
      accepted++;
      const meta = { key: line.idempotencyKey, format: line.format, nativeType: line.nativeType, raw: line.raw, rawJson: line.rawJson, receivedAt: line.receivedAt, clampedFrom: line.clampedFrom };
      if (!line.event || !line.event.threadId) await storeThreadless(tx, source.id, line, meta.key);
      else {
        const thread = batch.known(source, line.event.threadId) ?? (await batch.thread(source, line.event.threadId));
        if (!thread.pathsJoined) await batch.joinPaths(thread, line.format);
        const applying = batch.apply(thread, line.event, meta);
        if (applying instanceof Promise) await applying;
      }
      // Usage windows go to their own store beside the event; they change no thread's state.
      if (line.limits?.length) {
        await tx.saveLimitSnapshots(source.id, line.limits);
        batch.limitsChanged = true;
      }
    }
    if (accepted) await tx.touchSource(source.id, now);
    if (options.otlp) await tx.touchOtlp(source.id, now);
  });
  return { accepted, duplicates, threadIds, newDirectives: batch.newDirectives };
}

/** A line whose event time was moved back to its receive time keeps the time it was sent with. */
type ClampedLine = NormalizedLine & { clampedFrom?: number };

/** Event times too far ahead of the receive time are clamped to it (see MAX_CLOCK_AHEAD_MS). */
export function clampClockAhead(line: NormalizedLine): ClampedLine {
  const event = line.event;
  if (!event || event.at - line.receivedAt <= MAX_CLOCK_AHEAD_MS) return line;
  const lastAt = event.lastAt == null ? event.lastAt : Math.min(event.lastAt, line.receivedAt);
  return { ...line, event: { ...event, at: line.receivedAt, ...(lastAt === undefined ? {} : { lastAt }) }, clampedFrom: event.at };
}

/** Lines that belong to no thread (e.g. account-wide rate-limit updates) are kept raw. */
async function storeThreadless(tx: Tx, sourceId: string, line: ClampedLine, key: string) {
  await tx.insertEvent({
    sourceId,
    threadId: null,
    idempotencyKey: key,
    format: line.format,
    nativeType: line.nativeType,
    event: line.event ?? { type: line.limits?.length && line.format === "canonical" ? "limit.updated" : "unknown", at: line.receivedAt, threadId: "" },
    kind: null,
    receivedAt: line.receivedAt,
    raw: line.raw,
    rawJson: line.rawJson,
    clampedFrom: line.clampedFrom,
  });
}

/** What applying a server-originated event did: the thread's state after the unit of work, and the engine's note on the event. */
export interface InternalEventOutcome {
  state: ThreadState;
  applied: AppliedStep | null;
  /** The thread's state just before the event. */
  before: ThreadState;
}

type InternalEvent = Omit<NormalizedEvent, "threadId" | "at"> & { at?: number };

/**
 * Applies server-originated events inside one unit of work; `apply` answers null for an unknown
 * thread. An outcome's `state` is read live: once the unit of work has finished (in `settle`, or
 * after the call returns) it is the thread's state as saved.
 */
export type ApplyInternal = (threadId: number, event: InternalEvent) => Promise<InternalEventOutcome | null>;

export async function withInternalEvents<T>(
  now: number,
  work: (apply: ApplyInternal, tx: Tx) => Promise<T>,
  settle?: (value: T, tx: Tx) => Promise<void>,
): Promise<T> {
  let value: T;
  await runBatch(
    now,
    async (batch, tx) => {
      const apply: ApplyInternal = async (threadId, event) => {
        const thread = await batch.threadById(threadId);
        if (!thread) return null;
        const before = thread.state;
        // Never before the thread's last event: a source whose clock runs (a little) ahead must
        // not make the operator's stop sort before what it already reported.
        const applied = await batch.internal(thread, { ...event, at: Math.max(event.at ?? now, thread.state.lastEventAt ?? 0), threadId: thread.externalId });
        return {
          get state() {
            return thread.state;
          },
          applied,
          before,
        };
      };
      value = await work(apply, tx);
    },
    settle && ((tx) => settle(value, tx)),
  );
  return value!;
}

/** A watchdog failure for one thread: how often in a row, and the last error. */
const tickFailures = shared("tickFailures", (): Map<number, number> => new Map());

/** A thread whose tick failed this many passes in a row is quarantined as `broken`. */
export const QUARANTINE_AFTER_FAILURES = 3;

/**
 * The watchdog's pass: applies the engine's tick to threads whose wake time has come. The pass
 * is one unit of work; when it fails, each thread is ticked in its own, so one thread that throws
 * never holds back the others' deadlines. A thread that keeps failing is quarantined (broken,
 * the error in its timeline, an audit row) and no longer woken.
 */
export async function tickThreads(threadIds: number[], now = Date.now()): Promise<number[]> {
  try {
    return await tickDue(threadIds, now);
  } catch {
    const changed: number[] = [];
    for (const id of threadIds) {
      try {
        changed.push(...(await tickDue([id], now)));
        tickFailures.delete(id);
      } catch (error) {
        const failures = (tickFailures.get(id) ?? 0) + 1;
        tickFailures.set(id, failures);
        const message = `watchdog could not tick the thread: ${(error as Error)?.message ?? String(error)}`;
        process.stderr.write(`[radar] thread ${id}: ${message} (${failures}/${QUARANTINE_AFTER_FAILURES})\n`);
        // A database-level failure (disk full, I/O) is no fault of the thread: never quarantine for it;
        // nor for a commit step's, which fails every unit of work its commit holds (unit-of-work.ts).
        if (failures >= QUARANTINE_AFTER_FAILURES && !isStoreFailure(error) && !failedInCommitStep(error)) {
          await quarantine(id, message, now);
          tickFailures.delete(id);
          changed.push(id);
        }
      }
    }
    return changed;
  }
}

/**
 * One watchdog unit of work: each thread is read under its lock and caught up with the clock when
 * its wake time has still come (Batch.finish), and saved only if that changed it. So a pass that
 * finds a deadline already applied (by an event meanwhile, or another instance's pass while the
 * watchdog changed hands) changes and announces nothing.
 */
async function tickDue(threadIds: number[], now: number): Promise<number[]> {
  const { threadIds: changed } = await runBatch(now, async (batch) => {
    for (const id of threadIds) await batch.threadById(id);
  });
  return changed;
}

/**
 * One unit of work over the given threads without an event: `work` changes what is not the
 * engine's (e.g. archive columns), the threads are caught up with the clock, saved and announced.
 */
export async function touchThreads(threadIds: number[], now: number, work?: (tx: Tx) => Promise<void>): Promise<number[]> {
  const { threadIds: changed } = await runBatch(now, async (batch, tx) => {
    await work?.(tx);
    for (const id of threadIds) {
      const thread = await batch.threadById(id);
      if (thread) thread.changed = true;
    }
  });
  return changed;
}

async function quarantine(id: number, message: string, now: number) {
  const quarantined = await transaction(async (tx) => {
    const transition = await tx.quarantineThread(id, message, now);
    if (transition === null) return false;
    await tx.insertAudit({ at: now, actor: "watchdog", action: "quarantine", target: transition.externalId, result: "broken", detail: message });
    // Broken by the watchdog is broken all the same: its alert commits with the quarantine.
    const alerts = threadAlerts([transition], now);
    if (alerts.length) await tx.enqueueAlerts(alerts, now);
    return true;
  });
  if (quarantined) publishThreadChanges([{ key: id, reorder: true }], now);
}

/**
 * A source's policy or capacity-recovery opt-in changed: every thread of the source learns it
 * through a `settings.changed` event, so replays see the change at the moment it happened
 * (turning recovery off cancels a pending recovery). Bounded units of work of THREADS_PER_UNIT.
 */
export async function applySourceSettings(source: SourceRecord, now = Date.now()): Promise<number[]> {
  const ids = await transaction(async (tx) => tx.threadIdsOfSource(source.id));
  const changed: number[] = [];
  for (let from = 0; from < ids.length; from += THREADS_PER_UNIT) {
    const { threadIds } = await runBatch(now, async (batch) => {
      for (const id of ids.slice(from, from + THREADS_PER_UNIT)) {
        const thread = await batch.threadById(id);
        if (!thread) continue;
        await batch.internal(thread, {
          type: "settings.changed",
          at: now,
          threadId: thread.externalId,
          // What the source can reach is not a setting it chose: each unit of work sets it afresh.
          settings: { ...withoutReach(thread.state.settings), policy: source.policy, capacityRecovery: source.capacityRecovery, resumeAtReset: source.resumeAtReset },
        });
      }
    });
    changed.push(...threadIds);
  }
  return changed;
}
