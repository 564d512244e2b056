import { latestExactReset, latestReset, MAX_ADVICE_MS, parseAdvice } from "./advice";
import { classify, isRetryableKind, type Classification } from "./classify";
import { noteDuration as clock } from "./duration";
import { parseReconnectNotice } from "./notice";
import { defaultPolicyFor, drawDelayMs, expectedWindow, isOverCap, preset, resolvePolicy } from "./policies";
import { seededRandom } from "./random";
import type {
  AppliedStep,
  AttemptRecord,
  DirectiveIntent,
  EpisodeOutcome,
  EpisodeRecord,
  ErrorReport,
  PolicyDefinition,
  RadarEvent,
  RadarEventType,
  RecoveryRecord,
  StepEffects,
  StepResult,
  ThreadSettings,
  ThreadState,
  ThreadStatus,
  TroubleKind,
} from "./types";
import { RESUME_AT_RESET, RESUME_NOW } from "./types";

/** A stop the source never acknowledges leaves the thread `stopping` at most this long. */
export const STOP_GRACE_MS = 60_000;
/** More timers than one thread can have pending at once (deadline, reset, grace, recovery), with room. */
const MAX_TIMERS_PER_CATCH_UP = 64;
/** Attempts kept per episode (the newest); the full timeline lives in the stored events. */
export const MAX_ATTEMPT_RECORDS = 50;

export function initialThreadState(threadId: string): ThreadState {
  return {
    threadId,
    parentThreadId: null,
    agent: null,
    provider: null,
    model: null,
    title: null,
    settings: {},
    status: "idle",
    turnId: null,
    turnOpen: false,
    retry: null,
    lastError: null,
    episode: null,
    episodeCount: 0,
    recovery: null,
    interrupt: null,
    wakeAt: null,
    lastEventAt: null,
    lastSeq: null,
    lastProgressAt: null,
    progressCount: 0,
    windowReset: null,
    failedCall: null,
  };
}

/**
 * Applies one event. Deadlines that passed before the event (and not after `now`) fire first,
 * stamped with their own time, so the result does not depend on when the watchdog ran; what
 * they ask of the source is requested at the event's time (see `runTimers`).
 * `random` draws recovery jitter; by default it is seeded by thread and event, so a replay
 * draws the same waits.
 */
export function reduce(state: ThreadState, event: RadarEvent, now: number, random?: () => number): StepResult {
  const step = begin(state);
  runTimers(step, Math.min(event.at, now));
  const s = step.s;
  s.lastSeq = event.seq;
  if (s.lastEventAt === null || event.at > s.lastEventAt) s.lastEventAt = event.at;
  absorbMetadata(s, event);
  if (event.awaitingUser && recoveryPending(s)) cancelRecovery(step, "an approval or question is open", "failed");
  // Event kinds are an open set: one we do not know is kept and changes nothing.
  (HANDLERS[event.type] ?? HANDLERS.unknown)(step, event, random);
  return finish(step, true);
}

/**
 * Fires every timer due by `now`: missed deadlines, reset times, stop grace, recovery waits.
 * `reachableSince` is when the server became able to hear its sources again (its start): an
 * interrupt requested before then and still pending gets a full grace from then, since no source
 * could fetch or acknowledge it while the server was down. Ticks at times before it (a replay of
 * older events) are unaffected, so a replay reproduces what the live server decided.
 */
export function tick(state: ThreadState, now: number, reachableSince?: number): StepResult {
  const resumed = reachableSince === undefined || now < reachableSince ? state : resumeGrace(state, reachableSince);
  if (resumed.wakeAt === null || resumed.wakeAt > now) return { state: resumed, effects: NO_EFFECTS };
  const step = begin(resumed);
  runTimers(step, now);
  return finish(step, false);
}

/**
 * Ticks at each wake time up to `until`, as a watchdog that was on time would have, so replays
 * and events after a quiet stretch reproduce what the live server decided then. `onStep` sees
 * every step (each may end an episode or carry directives); the result carries the effects of
 * the last one (none when no timer was due). Bounded: every tick must move the wake time on, and
 * a fired timer never comes back.
 */
export function tickOnTime(
  state: ThreadState,
  until: number,
  onStep?: (before: ThreadState, after: StepResult) => void,
  reachableSince?: number,
): StepResult {
  let last: StepResult = { state, effects: NO_EFFECTS };
  for (let guard = 0; guard < MAX_TIMERS_PER_CATCH_UP; guard++) {
    const wakeAt = last.state.wakeAt;
    if (wakeAt === null || wakeAt > until) return last;
    const after = tick(last.state, wakeAt, reachableSince);
    onStep?.(last.state, after);
    last = after;
    if (after.state.wakeAt !== null && after.state.wakeAt <= wakeAt) return after;
  }
  return last;
}

/**
 * The status to display at `now`. `stalled` is never stored: it is a retry whose deadline has
 * passed while the watchdog has not ticked yet; the tick then ends it `exhausted`.
 */
export function viewStatus(state: ThreadState, now: number): ThreadStatus {
  const deadlineAt = state.retry?.deadlineAt;
  const waiting = state.status === "retrying" || state.status === "waiting_reset";
  return waiting && deadlineAt != null && now >= deadlineAt ? "stalled" : state.status;
}

/**
 * Rebuilds a thread from its events as a server that stayed up saw them: ordered by event time
 * then sequence, the timers due before each event fired on time, then the event reduced, then
 * the timers up to `now`. Same events, same state.
 */
export function replay(events: RadarEvent[], now: number, randomFor?: (event: RadarEvent) => () => number): ThreadState {
  if (events.length === 0) throw new RangeError("replay needs at least one event");
  const threadId = events[0].threadId;
  if (events.some((e) => e.threadId !== threadId)) throw new RangeError("replay takes the events of one thread");
  const ordered = [...events].sort((a, b) => a.at - b.at || a.seq - b.seq);
  let state = initialThreadState(threadId);
  for (const event of ordered) state = reduce(tickOnTime(state, Math.min(event.at, now)).state, event, now, randomFor?.(event)).state;
  return tickOnTime(state, now).state;
}

// ---------------------------------------------------------------------------------------------
// One call = one step: a shallow copy of the state that handlers edit in place (nested records
// are replaced, never mutated), plus what the step produced.

interface Step {
  s: ThreadState;
  directives: DirectiveIntent[];
  notes: string | null;
  late: boolean;
  earlyByMs: number | null;
  endedEpisode: EpisodeRecord | null;
}

/** Shared by every quiet step (most of them), so reducing allocates as little as it can. */
const NO_DIRECTIVES: DirectiveIntent[] = Object.freeze([]) as unknown as DirectiveIntent[];
const APPLIED_QUIETLY: AppliedStep = Object.freeze({ late: false, earlyByMs: null, note: null });
const NO_EFFECTS: StepEffects = Object.freeze({ directives: NO_DIRECTIVES, applied: null, endedEpisode: null });

type Handler = (step: Step, event: RadarEvent, random: (() => number) | undefined) => void;

function begin(state: ThreadState): Step {
  return { s: copy(state), directives: NO_DIRECTIVES, notes: null, late: false, earlyByMs: null, endedEpisode: null };
}

/**
 * A shallow copy spelled out: V8 builds it far faster than a spread, and the type keeps it
 * complete. It also drops fields a state stored by an older version may still carry.
 */
function copy(s: ThreadState): ThreadState {
  return {
    threadId: s.threadId,
    parentThreadId: s.parentThreadId,
    agent: s.agent,
    provider: s.provider,
    model: s.model,
    title: s.title,
    settings: s.settings,
    status: s.status,
    turnId: s.turnId,
    turnOpen: s.turnOpen,
    retry: s.retry,
    lastError: s.lastError,
    episode: s.episode,
    episodeCount: s.episodeCount,
    recovery: s.recovery,
    interrupt: s.interrupt,
    wakeAt: s.wakeAt,
    lastEventAt: s.lastEventAt,
    lastSeq: s.lastSeq,
    lastProgressAt: s.lastProgressAt,
    progressCount: s.progressCount,
    // Absent in states stored before it existed.
    windowReset: s.windowReset ?? null,
    failedCall: s.failedCall ?? null,
  };
}

function finish(step: Step, fromEvent: boolean): StepResult {
  const s = step.s;
  const { notes: note, late, earlyByMs } = step;
  s.wakeAt = wakeAtOf(s);
  const applied = note === null && !late && earlyByMs === null ? (fromEvent ? APPLIED_QUIETLY : null) : { late, earlyByMs, note };
  return { state: s, effects: { directives: step.directives, applied, endedEpisode: step.endedEpisode } };
}

function note(step: Step, text: string) {
  step.notes = step.notes === null ? text : `${step.notes}; ${text}`;
}

function direct(step: Step, directive: DirectiveIntent) {
  step.directives = step.directives === NO_DIRECTIVES ? [directive] : [...step.directives, directive];
}

function wakeAtOf(s: ThreadState): number | null {
  let wake = episodeOpen(s) ? (s.retry?.deadlineAt ?? null) : null;
  if (s.status === "waiting_reset") wake = earlier(wake, s.retry?.resetAt ?? null);
  if (s.interrupt?.result === "pending") wake = earlier(wake, s.interrupt.graceEndsAt);
  if (s.recovery?.state === "scheduled") wake = earlier(wake, s.recovery.dueAt);
  return wake;
}

function earlier(a: number | null, b: number | null): number | null {
  return a === null || (b !== null && b < a) ? b : a;
}

/**
 * Fires the timers due by `until` (the step's own time), each at its own time: an episode ends
 * at its true deadline however late the tick. What a timer asks of the source is requested at
 * `until`, when it can first be delivered, so an interrupt's acknowledgement grace is never
 * spent before the server was there to send it (after downtime, a blocked event loop, a slow
 * start). Each timer, once fired, is cleared or moved past its time, so this loop always ends.
 */
function runTimers(step: Step, until: number) {
  for (let at = wakeAtOf(step.s); at !== null && at <= until; at = wakeAtOf(step.s)) {
    const s = step.s;
    const deadlineAt = s.retry?.deadlineAt;
    if (episodeOpen(s) && deadlineAt != null && deadlineAt <= at) {
      exhaust(step, at, until, `no progress or new notice by the deadline (${clock(deadlineAt - s.episode!.attempts.at(-1)!.noticeAt)} after the notice): the retry stalled`, s.retry!.resetAt);
    }
    if (s.status === "waiting_reset" && s.retry?.resetAt != null && s.retry.resetAt <= at) resetPassed(step);
    if (s.interrupt?.result === "pending" && s.interrupt.graceEndsAt <= at) unconfirmedStop(step);
    if (s.recovery?.state === "scheduled" && s.recovery.dueAt <= at) fireRecovery(step, at, until);
  }
}

/** A pending interrupt requested before the server could hear its sources gets its full grace from then. */
function resumeGrace(state: ThreadState, reachableSince: number): ThreadState {
  const i = state.interrupt;
  if (i?.result !== "pending" || i.requestedAt >= reachableSince) return state;
  const graceEndsAt = reachableSince + stopGraceMs(state.settings);
  if (graceEndsAt <= i.graceEndsAt) return state;
  const s = copy(state);
  s.interrupt = { ...i, graceEndsAt };
  s.wakeAt = wakeAtOf(s);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Event handlers

const HANDLERS: Record<RadarEventType, Handler> = {
  "thread.started": onThreadStarted,
  "turn.started": onTurnStarted,
  progress: onProgress,
  retry: onRetry,
  attempt: onAttempt,
  "turn.completed": onTurnCompleted,
  "turn.failed": onTurnFailed,
  "turn.interrupted": onTurnInterrupted,
  "interrupt.requested": (step, e) => requestStop(step, e, false),
  "interrupt.ack": (step, e) => {
    if (!confirmInterrupt(step, e, "ack")) note(step, "no interrupt is waiting for an acknowledgement");
  },
  "stop.requested": (step, e) => requestStop(step, e, true),
  "directive.acked": onDirectiveAcked,
  "settings.changed": onSettingsChanged,
  "thread.archived": (step) => {
    if (recoveryPending(step.s)) cancelRecovery(step, "the thread was archived or snoozed", "failed");
    else note(step, "archived");
  },
  "resume.requested": onResumeRequested,
  "retry.requested": onRetryRequested,
  "limit.updated": (step, e) => rememberWindowReset(step, e) || note(step, "usage window snapshot: kept, changes nothing"),
  unknown: (step, e) => rememberWindowReset(step, e) || note(step, "unknown event kind: kept, changes nothing"),
};

/** An informational event naming an exact window reset (a Codex rate-limit snapshot): remembered for the error that follows. */
function rememberWindowReset(step: Step, e: RadarEvent): boolean {
  if (!e.error?.details) return false;
  const resetAt = latestExactReset(parseAdvice(e.error, e.at).hints);
  if (resetAt === null) return false;
  step.s.windowReset = resetAt;
  note(step, `window reset remembered (${new Date(resetAt).toISOString()})`);
  return true;
}

/**
 * The exact reset the source reported apart from the error (the event's own, else the one the
 * thread remembered while it is still ahead): a minute-only text within a minute of it gives way to it.
 */
function rememberedReset(s: ThreadState, e: RadarEvent): number | null {
  if (e.windowResetAt != null) return e.windowResetAt;
  return s.windowReset !== null && s.windowReset >= e.at ? s.windowReset : null;
}

function absorbMetadata(s: ThreadState, e: RadarEvent) {
  if (e.parentThreadId != null && e.parentThreadId !== s.parentThreadId) s.parentThreadId = e.parentThreadId;
  if (e.agent != null && e.agent !== s.agent) s.agent = e.agent;
  if (e.provider != null && e.provider !== s.provider) s.provider = e.provider;
  if (e.model != null && e.model !== s.model) s.model = e.model;
  if (e.title != null && e.title !== s.title) s.title = e.title;
}

function onThreadStarted(step: Step, e: RadarEvent) {
  const s = step.s;
  if (episodeOpen(s)) endEpisode(step, e.at, "superseded", "superseded", "the thread started again");
  supersedeInterrupt(s);
  s.turnOpen = false;
  s.retry = null;
  s.failedCall = null;
  // A pending recovery survives (only the listed reasons cancel it).
  if (s.recovery?.state !== "scheduled") s.status = "idle";
}

function onTurnStarted(step: Step, e: RadarEvent) {
  const s = step.s;
  if (e.turnId != null && e.turnId === s.turnId) {
    if (s.turnOpen) note(step, "the turn is already running");
    else markLate(step, "this turn has already ended");
    return;
  }
  if (episodeOpen(s)) endEpisode(step, e.at, "superseded", "superseded", "a new turn started");
  supersedeInterrupt(s);
  const r = s.recovery;
  if (r?.state === "fired" && r.turnId === null) {
    // The turn our `continue` asked for: the recovery's own turn, not a new user turn.
    s.recovery = { ...r, turnId: e.turnId ?? null };
    note(step, `${continuationLabel(r)}: continuation ${r.attempt} started`);
  } else if (r?.state === "scheduled") cancelRecovery(step, "a new user turn started", null);
  s.turnId = e.turnId ?? null;
  s.turnOpen = true;
  s.status = "running";
  s.retry = null;
  s.lastError = null;
  s.failedCall = null;
}

function onProgress(step: Step, e: RadarEvent) {
  if (!admitTurnEvent(step, e)) return;
  const s = step.s;
  s.lastProgressAt = e.lastAt ?? e.at;
  s.progressCount += positiveInt(e.progressCount) ?? 1;
  if (episodeOpen(s)) {
    endEpisode(step, e.at, "recovered", null, "progress resumed");
    s.status = "recovered";
    s.retry = null;
  }
}

function onRetry(step: Step, given: RadarEvent, random: (() => number) | undefined) {
  if (!admitTurnEvent(step, given)) return;
  const s = step.s;
  // The notice of a failed call already seen: that call needs no derived notice, and a notice
  // that says nothing of the failure (Codex's trace without its call) has that call's.
  const covered = s.failedCall !== null && given.at >= s.failedCall.startedAt ? s.failedCall : null;
  const e = covered?.error && given.error?.httpStatus == null && given.error?.code == null ? { ...given, error: withFailure(given.error, covered.error) } : given;
  if (covered) s.failedCall = null;
  const cls = classify(e.error);
  recordError(s, e, cls);
  if (e.willRetry === false) return terminalFailure(step, e, cls, false, random);
  if (!isRetryableKind(cls.kind)) {
    note(step, `${cls.kind} failures never recover by waiting: not shown as retrying`);
    return;
  }

  const { policy, explicit } = choosePolicy(step, e, cls.kind);
  const notice = parseReconnectNotice(e.error?.message);
  const sourceMax = positiveInt(e.maxAttempts) ?? notice?.maxAttempts ?? null;
  let episode = episodeOpen(s) ? s.episode : null;
  const last = episode?.attempts.at(-1) ?? null;
  const n = positiveInt(e.attempt) ?? notice?.attempt ?? (last ? last.n + 1 : 1);
  // A new kind or a count that starts over (Codex keeps capacity retries on their own counter)
  // is a new episode: attempts stay unique by n within one.
  if (episode && (episode.kind !== cls.kind || (last !== null && n <= last.n))) {
    endEpisode(step, e.at, "superseded", "superseded", `a new ${cls.kind} retry count began`);
    episode = null;
  }
  // A named policy is enforced even below the source's own maximum; the kind's default defers
  // to a source that says how many retries it will make (Claude: 10), so it is not cut short.
  const policyMax = policy?.maxAttempts ?? null;
  const bound = explicit ? minBound(policyMax, sourceMax) : (sourceMax ?? policyMax);
  const shownMax = sourceMax ?? bound;

  const advice = parseAdvice(e.error, e.at, e.delayMs);
  const exact = advice.hints[0]?.source === "delayMs" ? advice.hints[0] : null;
  const authoritative = advice.authoritative;
  const window = expectedWindow(policy, n, exact ? { delayMs: exact.delayMs, exact: true } : authoritative);
  const resetAt = latestReset(advice.hints, rememberedReset(s, e));
  const attempt: AttemptRecord = {
    n,
    noticeAt: e.at,
    advisedDelayMs: authoritative?.delayMs ?? null,
    hints: advice.hints,
    expectedAt: window ? e.at + window.earliestMs : null,
    estimated: window?.estimated ?? true,
    deadlineAt: window?.deadlineMs != null ? e.at + window.deadlineMs : null,
    startedAt: null,
    earlyByMs: null,
    httpStatus: cls.httpStatus,
    code: cls.code,
    message: e.error?.message ?? null,
  };

  const base = episode ?? newEpisode(s, e.at, cls.kind);
  s.episode = {
    ...base,
    kind: cls.kind,
    policy: policy?.name ?? null,
    maxAttempts: shownMax,
    bound,
    resetAt: resetAt ?? base.resetAt,
    attempts: appendAttempt(step, base.attempts, attempt),
    // Notice n: call n failed.
    attemptsMade: Math.max(callsOf(base), n),
  };

  if (bound !== null && n > bound) return exhaust(step, e.at, e.at, `attempt ${n} is past the bound of ${bound}`, resetAt);
  if (policy && authoritative && isOverCap(policy, authoritative.delayMs)) {
    const reason = `advised wait of ${clock(authoritative.delayMs)} is above the ${clock(policy.adviceCapMs!)} cap of ${policy.name}`;
    return exhaust(step, e.at, e.at, reason, resetAt ?? e.at + authoritative.delayMs);
  }
  s.retry = {
    kind: cls.kind,
    attempt: n,
    maxAttempts: shownMax,
    nextAttemptAt: attempt.expectedAt,
    nextAttemptEstimated: attempt.estimated,
    deadlineAt: attempt.deadlineAt,
    resetAt,
    advisedDelayMs: attempt.advisedDelayMs,
    policy: policy?.name ?? null,
  };
  const waitsForWindow = cls.kind === "usage_limit" || authoritative?.resetAt !== undefined;
  s.status = resetAt !== null && resetAt > e.at && waitsForWindow ? "waiting_reset" : "retrying";
}

/** A notice's own error completed by the failed call's status, code and message. */
function withFailure(own: RadarEvent["error"], failure: ErrorReport): ErrorReport {
  return { ...own, httpStatus: failure.httpStatus ?? null, code: failure.code ?? null, message: own?.message ?? failure.message ?? null };
}

/**
 * Adds a notice's attempt. The previous attempt's notice is followed by this one: if that came
 * sooner than advised, the source retried early by at least the difference.
 */
function appendAttempt(step: Step, attempts: AttemptRecord[], attempt: AttemptRecord): AttemptRecord[] {
  const out = attempts.length >= MAX_ATTEMPT_RECORDS ? attempts.slice(attempts.length - MAX_ATTEMPT_RECORDS + 1) : attempts.slice();
  const prev = out.at(-1);
  if (prev && prev.startedAt === null && prev.earlyByMs === null && prev.advisedDelayMs !== null) {
    const gap = attempt.noticeAt - prev.noticeAt;
    if (gap < prev.advisedDelayMs) {
      out[out.length - 1] = { ...prev, earlyByMs: prev.advisedDelayMs - gap };
      step.earlyByMs = prev.advisedDelayMs - gap;
      note(step, `retry ${prev.n} came ${clock(prev.advisedDelayMs - gap)} early`);
    }
  }
  out.push(attempt);
  return out;
}

/**
 * A call started. A failed call seen before it that no notice covered was retried by this one:
 * its notice is derived (the failed call's end, its error), as a source that exported no retry
 * notice (Codex's logs alone) would have announced it. Then the call starts the retry waiting for
 * it; a call that failed is remembered for the next one.
 */
function onAttempt(step: Step, e: RadarEvent, random: (() => number) | undefined) {
  if (!admitTurnEvent(step, e)) return;
  const s = step.s;
  const failed = s.failedCall;
  if (failed !== null && e.at >= failed.endedAt) {
    s.failedCall = null;
    onRetry(step, { seq: e.seq, type: "retry", at: failed.endedAt, threadId: e.threadId, turnId: e.turnId, error: failed.error, willRetry: true }, random);
    note(step, "retry derived from the failed call before this one");
    // A retry past the bound ended the episode, yet this call was made: it counts.
    const ended = s.episode;
    if (ended !== null && ended.outcome === "exhausted" && ended.endedAt === failed.endedAt) {
      s.episode = { ...ended, attemptsMade: Math.max(callsOf(ended), (ended.attempts.at(-1)?.n ?? 0) + 1) };
    }
  }
  startRetry(step, e);
  if (e.error) s.failedCall = { startedAt: e.at, endedAt: Math.max(e.at, e.endedAt ?? e.at), error: e.error };
}

function startRetry(step: Step, e: RadarEvent) {
  const s = step.s;
  const episode = episodeOpen(s) ? s.episode! : null;
  const n = positiveInt(e.attempt) ?? episode?.attempts.at(-1)?.n ?? null;
  const index = episode && n !== null ? lastIndexOfAttempt(episode.attempts, n) : -1;
  if (!episode || index < 0 || episode.attempts[index].startedAt !== null) {
    if (!e.error) note(step, "no retry notice is waiting for this attempt");
    return;
  }
  const attempt = episode.attempts[index];
  const gap = e.at - attempt.noticeAt;
  const earlyByMs = attempt.advisedDelayMs !== null && gap < attempt.advisedDelayMs ? attempt.advisedDelayMs - gap : null;
  const attempts = episode.attempts.slice();
  attempts[index] = { ...attempt, startedAt: e.at, earlyByMs };
  // Retry n started: call n + 1.
  s.episode = { ...episode, attempts, attemptsMade: Math.max(callsOf(episode), attempt.n + 1) };
  step.earlyByMs = earlyByMs;
  if (earlyByMs !== null) note(step, `retry ${attempt.n} came ${clock(earlyByMs)} early`);
}

function onTurnCompleted(step: Step, e: RadarEvent, random: (() => number) | undefined) {
  const failed = e.lastCallDecides ? step.s.failedCall : null;
  if (failed !== null) return onTurnFailed(step, { ...e, type: "turn.failed", error: failed.error }, random);
  if (confirmInterrupt(step, e, "turn-end") || !admitTurnEvent(step, e)) return;
  const s = step.s;
  if (episodeOpen(s)) endEpisode(step, e.at, "completed", null, "the turn completed");
  s.status = "completed";
  s.turnOpen = false;
  s.retry = null;
  s.failedCall = null;
}

function onTurnFailed(step: Step, e: RadarEvent, random: (() => number) | undefined) {
  if (confirmInterrupt(step, e, "turn-end") || !admitTurnEvent(step, e)) return;
  const cls = classify(e.error);
  if (e.error) recordError(step.s, e, cls);
  terminalFailure(step, e, cls, true, random);
}

function onTurnInterrupted(step: Step, e: RadarEvent) {
  if (confirmInterrupt(step, e, "ack") || !admitTurnEvent(step, e)) return;
  // Nobody here asked for it: the agent's own user interrupted the turn.
  const s = step.s;
  if (episodeOpen(s)) endEpisode(step, e.at, "interrupted", "interrupted", "the turn was interrupted at its source");
  s.status = "stopped";
  s.turnOpen = false;
  s.retry = null;
  s.failedCall = null;
}

/** Stop retrying (operator, or a parent's cascade) or an interrupt the source itself requested. */
function requestStop(step: Step, e: RadarEvent, sendDirective: boolean) {
  const s = step.s;
  if (recoveryPending(s)) {
    cancelRecovery(step, sendDirective ? "stopped by operator" : "the source interrupted", "stopped");
    return;
  }
  const fromBroken = s.status === "broken" || isAbandoned(s);
  if (s.interrupt?.result === "pending") {
    note(step, "an interrupt is already pending");
    return;
  }
  if (!s.turnOpen && !fromBroken) {
    note(step, `thread is ${s.status}: nothing to stop`);
    return;
  }
  const reason = e.reason ?? (sendDirective ? "Stop retrying" : "interrupt requested by the source");
  if (episodeOpen(s)) endEpisode(step, e.at, "stopped", "stoppedByOperator", reason);
  const key = `${s.threadId}:${s.turnId ?? "-"}:stop${e.seq}`;
  interrupt(step, e.at, key, "operator", e.actor ?? (sendDirective ? null : "source"), reason, fromBroken, sendDirective);
  s.status = "stopping";
  s.turnOpen = false;
  s.retry = null;
}

function onDirectiveAcked(step: Step, e: RadarEvent) {
  const s = step.s;
  const i = s.interrupt;
  // The server's directive ids are its own; the turn tells which directive an ack answers.
  const answersInterrupt =
    i !== null &&
    (i.result === "pending" || i.result === "unconfirmed") &&
    (e.directiveId === i.key || e.directiveId == null || (e.turnId ?? null) === i.turnId);
  if (answersInterrupt) {
    if (e.ackResult === "failed") note(step, "the source could not apply the interrupt: still stopping until the grace ends");
    else confirmInterrupt(step, e, "ack");
    return;
  }
  const r = s.recovery;
  if (r?.state === "fired" && r.turnId === null && (e.directiveId === continueKey(s, r) || (e.directiveId == null && (e.turnId ?? null) === r.failedTurnId))) {
    if (e.ackResult === "failed") cancelRecovery(step, `the source could not start the continuation${e.reason ? `: ${e.reason}` : ""}`, "failed");
    else note(step, "the source accepted the continuation");
    return;
  }
  note(step, "no pending directive matches this acknowledgement");
}

function onSettingsChanged(step: Step, e: RadarEvent) {
  const s = step.s;
  if (e.settings) s.settings = { ...s.settings, ...e.settings };
  const r = s.recovery;
  if (recoveryPending(s) && r!.policy === RESUME_AT_RESET && !resumeAtResetOn(s.settings)) cancelRecovery(step, "resume at reset was turned off", "failed");
  else if (recoveryPending(s) && r!.policy !== RESUME_AT_RESET && r!.policy !== RESUME_NOW && !recoveryPolicy(s.settings)) {
    cancelRecovery(step, "capacity recovery was turned off", "failed");
  } else note(step, "settings changed: they apply from the next notice or stop");
}

/**
 * Resume now: a `continue` for a turn that ended (exhausted, failed, broken, or waiting for a
 * scheduled continuation, which it replaces). Whether the source can carry it out is the
 * server's to check before asking (lib/threads/control.ts).
 */
function onResumeRequested(step: Step, e: RadarEvent) {
  const s = step.s;
  if (s.turnOpen) {
    note(step, "the turn is still running: nothing to resume");
    return;
  }
  if (recoveryPending(s) && s.recovery!.state === "fired") {
    note(step, "a continuation is already on its way");
    return;
  }
  if (s.recovery?.state === "scheduled") cancelRecovery(step, "resumed by operator", null);
  resumeNow(step, e, e.at);
}

function resumeNow(step: Step, e: RadarEvent, at: number) {
  const s = step.s;
  const r: RecoveryRecord = {
    attempt: 1,
    max: 1,
    dueAt: at,
    state: "fired",
    cancelledReason: null,
    policy: RESUME_NOW,
    failedTurnId: s.turnId,
    turnId: null,
    key: `${s.threadId}:${s.turnId ?? "-"}:resume${e.seq}:continue`,
  };
  s.recovery = r;
  s.status = "recovery_scheduled";
  s.retry = null;
  const reason = e.reason ?? "Resume now";
  direct(step, { key: r.key!, kind: "continue", turnId: r.failedTurnId, reason, origin: "operator", cascade: false, at, dueAt: at });
  note(step, `resumed by ${e.actor ?? "operator"}: a continue was sent`);
}

/**
 * Retry now: the source is waiting out a backoff (or a window reset) we would rather not wait
 * for. Its turn is interrupted; once the source confirms, the turn is continued (a relay cannot
 * start a turn while one runs, so the continue waits for the confirmation).
 */
function onRetryRequested(step: Step, e: RadarEvent) {
  const s = step.s;
  if (!s.turnOpen || !(s.status === "retrying" || s.status === "waiting_reset")) {
    note(step, `thread is ${s.status}: no backoff to cut short`);
    return;
  }
  if (s.interrupt?.result === "pending") {
    note(step, "an interrupt is already pending");
    return;
  }
  const reason = e.reason ?? "Retry now";
  if (episodeOpen(s)) endEpisode(step, e.at, "interrupted", "retryNow", reason);
  const key = `${s.threadId}:${s.turnId ?? "-"}:retry${e.seq}`;
  s.interrupt = { key, turnId: s.turnId, origin: "operator", actor: e.actor ?? null, reason, requestedAt: e.at, graceEndsAt: e.at + stopGraceMs(s.settings), result: "pending", thenIdle: false, thenContinue: true };
  direct(step, { key, kind: "interrupt", turnId: s.turnId, reason, origin: "operator", cascade: false, at: e.at, dueAt: e.at });
  s.status = "stopping";
  s.turnOpen = false;
  s.retry = null;
}

// ---------------------------------------------------------------------------------------------
// Episodes, failures and stops

/**
 * Whether a turn-scoped event belongs to the running turn. A fresh or idle thread adopts the
 * turn of its first event (sources that send no turn.started). Anything for a turn that ended
 * is late: kept in the timeline, changes nothing.
 */
function admitTurnEvent(step: Step, e: RadarEvent): boolean {
  const s = step.s;
  const turnId = e.turnId ?? s.turnId;
  if (turnId === s.turnId && s.turnOpen) return true;
  if (!s.turnOpen && s.status === "idle" && (s.turnId === null || turnId !== s.turnId)) {
    s.turnId = turnId;
    s.turnOpen = true;
    s.status = "running";
    return true;
  }
  markLate(step, turnId === s.turnId ? "its turn has ended" : `turn ${turnId} is not the current turn`);
  return false;
}

function markLate(step: Step, why: string) {
  step.late = true;
  note(step, `late: ${why}`);
}

/**
 * A failure the source will not retry (a retry notice with willRetry false, or turn.failed).
 * The turn's episode ends `failed`; a usage or rate window with a future reset waits for it;
 * an opted-in capacity failure schedules a recovery.
 */
function terminalFailure(step: Step, e: RadarEvent, cls: Classification, endsTurn: boolean, random: (() => number) | undefined) {
  const s = step.s;
  const reportedByNotice = endsTurn && s.turnOpen && !episodeOpen(s) && (s.status === "failed" || s.status === "waiting_reset" || s.status === "recovery_scheduled");
  if (endsTurn) s.turnOpen = false;
  s.failedCall = null;
  // The source's final notice already ended this failure; its turn.failed only closes the turn
  // (and may add the source's own count and retry time to the episode that notice failed).
  if (reportedByNotice) {
    const ended = s.episode;
    if (ended !== null && ended.outcome === "failed" && ended.turnId === s.turnId) s.episode = withReportedCount(ended, e);
    if (s.status !== "recovery_scheduled") armRecovery(step, e, cls, random);
    return;
  }
  const advice = parseAdvice(e.error, e.at);
  const resetAt = latestReset(advice.hints, rememberedReset(s, e));
  const reason = e.error?.message ?? `${cls.kind} failure`;
  const episode = episodeOpen(s) ? s.episode! : e.type === "retry" ? newEpisode(s, e.at, cls.kind) : null;
  if (episode) {
    s.episode = withReportedCount(
      { ...episode, kind: cls.kind, endedAt: e.at, outcome: "failed", outcomeCode: cls.code ?? cls.kind, outcomeReason: reason, resetAt: resetAt ?? episode.resetAt },
      e,
    );
  }
  s.retry = null;
  if (armRecovery(step, e, cls, random)) return;
  if (resetAt !== null && resetAt > e.at && (cls.kind === "usage_limit" || cls.kind === "rate_limit")) {
    s.status = "waiting_reset";
    s.retry = {
      kind: cls.kind,
      attempt: s.episode?.attempts.at(-1)?.n ?? 0,
      maxAttempts: s.episode?.maxAttempts ?? null,
      nextAttemptAt: null,
      nextAttemptEstimated: false,
      deadlineAt: null,
      resetAt,
      advisedDelayMs: advice.authoritative?.delayMs ?? null,
      policy: s.episode?.policy ?? null,
    };
    if (cls.kind === "usage_limit") armResumeAtReset(step, e.at, `${e.seq}`, resetAt, random);
    return;
  }
  s.status = "failed";
}

/** Usage/rate window reset passed: a retrying source is due now; an ended turn stays failed. */
function resetPassed(step: Step) {
  const s = step.s;
  if (episodeOpen(s)) {
    s.status = "retrying";
    note(step, "reset time passed: the source's retry is due");
  } else {
    s.status = "failed";
    s.retry = null;
    note(step, "reset time passed: the turn had ended and nothing resumes it by itself");
  }
}

/** The policy bound was hit: the episode ends `exhausted` and the source must stop (with its descendants). */
function exhaust(step: Step, at: number, requestAt: number, reason: string, resetAt: number | null) {
  const s = step.s;
  const episode = s.episode!;
  const code = exhaustedCode(episode.kind);
  s.episode = { ...episode, endedAt: at, outcome: "exhausted", outcomeCode: code, outcomeReason: reason, resetAt: resetAt ?? episode.resetAt };
  s.status = "exhausted";
  s.retry = null;
  s.turnOpen = false;
  s.lastError = { kind: episode.kind, httpStatus: s.lastError?.httpStatus ?? null, code, message: reason };
  note(step, `exhausted: ${reason}`);
  // No directive nobody can receive: it would only turn the thread broken for want of an answer.
  if (s.settings.reach?.interrupt === false) return note(step, "nothing can reach this agent: no interrupt asked");
  const key = `${s.threadId}:${s.turnId ?? "-"}:ep${episode.seq}:interrupt`;
  interrupt(step, requestAt, key, "policy", episode.policy === null ? "policy" : `policy ${episode.policy}`, reason, false, true, at);
  // Stopped on a usage limit whose reset is known: resume at reset picks the turn up then.
  const reset = s.episode!.resetAt;
  if (episode.kind === "usage_limit" && reset !== null && reset > at) armResumeAtReset(step, at, `ep${episode.seq}`, reset, undefined);
}

/** `at` is when it is requested (its grace starts then); `dueAt`, when the rule that asks for it fired. */
function interrupt(step: Step, at: number, key: string, origin: "operator" | "policy", actor: string | null, reason: string, thenIdle: boolean, send: boolean, dueAt = at) {
  const s = step.s;
  s.interrupt = { key, turnId: s.turnId, origin, actor, reason, requestedAt: at, graceEndsAt: at + stopGraceMs(s.settings), result: "pending", thenIdle };
  if (send) direct(step, { key, kind: "interrupt", turnId: s.turnId, reason, origin, cascade: true, at, dueAt });
}

/**
 * The source confirmed the pending interrupt: an explicit acknowledgement, or (while pending)
 * any end of that turn, which is then a late frame. An operator stop ends `stopped` (`idle` for
 * a broken or abandoned thread); a policy interrupt leaves the episode's `exhausted` in place.
 * After the grace only an explicit acknowledgement counts, and returns the thread to idle.
 */
function confirmInterrupt(step: Step, e: RadarEvent, how: "ack" | "turn-end"): boolean {
  const s = step.s;
  const i = s.interrupt;
  if (i === null || (e.turnId != null && i.turnId !== null && e.turnId !== i.turnId)) return false;
  if (i.result === "unconfirmed" && how === "ack") {
    s.interrupt = { ...i, result: "acknowledged" };
    s.status = "idle";
    note(step, "stop acknowledged after the grace: the thread is idle again");
    return true;
  }
  if (i.result !== "pending") return false;
  s.interrupt = { ...i, result: "acknowledged" };
  if (i.origin === "operator") s.status = i.thenIdle ? "idle" : "stopped";
  if (how === "turn-end") markLate(step, "the turn ended after the interrupt; taken as its confirmation");
  else note(step, "interrupt acknowledged");
  if (i.thenContinue) resumeNow(step, { ...e, reason: i.reason, actor: i.actor }, e.at);
  return true;
}

/**
 * No acknowledgement within the grace: the source may still be retrying, so the thread is
 * `broken` (its next turn must resume it fresh). There is no `error` status, so a subagent
 * left this way is `failed` with code "abandoned" rather than idle.
 */
function unconfirmedStop(step: Step) {
  const s = step.s;
  const i = s.interrupt!;
  s.interrupt = { ...i, result: "unconfirmed" };
  const grace = clock(i.graceEndsAt - i.requestedAt);
  if (s.parentThreadId !== null) {
    s.status = "failed";
    s.lastError = { kind: s.lastError?.kind ?? "other", httpStatus: null, code: "abandoned", message: `interrupt not acknowledged within ${grace}: subagent abandoned` };
  } else s.status = "broken";
  note(step, `interrupt not acknowledged within ${grace}`);
}

function supersedeInterrupt(s: ThreadState) {
  if (s.interrupt?.result === "pending") s.interrupt = { ...s.interrupt, result: "superseded" };
}

// ---------------------------------------------------------------------------------------------
// Capacity recovery (opt-in): promptless continuations after a terminal capacity failure.

/**
 * Armed only by Codex's typed `serverOverloaded`, never by text or a bare 503: only the typed
 * code says the model itself was at capacity. `serverOverloadedBeforeInput` is left out on purpose: that input was never recorded,
 * so an empty continuation would lose it. One owner per failure: a failure already owned is
 * never scheduled twice; the continuation's own failure schedules the next of at most 3.
 */
function armRecovery(step: Step, e: RadarEvent, cls: Classification, random: (() => number) | undefined): boolean {
  const s = step.s;
  if (cls.code !== "serverOverloaded") return false;
  const policy = recoveryPolicy(s.settings);
  if (!policy) return false;
  if (s.settings.reach?.continue === false) {
    note(step, "capacity recovery: nothing can continue this agent");
    return false;
  }
  const r = s.recovery;
  if (r !== null && r.failedTurnId === s.turnId) return r.state === "scheduled";
  const chained = r !== null && r.turnId !== null && r.turnId === s.turnId && r.policy === policy.name;
  const k = chained ? r.attempt + 1 : 1;
  if (policy.maxAttempts !== null && k > policy.maxAttempts) {
    s.recovery = { ...r!, state: "exhausted" };
    note(step, `capacity recovery gave up after ${r!.attempt} continuations`);
    return false;
  }
  const waitMs = drawDelayMs(policy, k, random ?? seededRandom(`${s.threadId}:${e.seq}`));
  s.recovery = {
    attempt: k,
    max: policy.maxAttempts,
    dueAt: e.at + waitMs,
    state: "scheduled",
    cancelledReason: null,
    policy: policy.name,
    failedTurnId: s.turnId,
    turnId: null,
  };
  s.status = "recovery_scheduled";
  note(step, `Model at capacity. Retrying in ~${Math.max(1, Math.round(waitMs / 60_000))} min, attempt ${k}/${policy.maxAttempts ?? "∞"}`);
  return true;
}

/**
 * Resume at reset (opt-in): a turn that failed on a usage limit whose reset is known is continued
 * once the window has reset, plus a small jitter (at most 10 % of the wait, at most 30 s) so the
 * threads of one account do not all start in the same second.
 */
function armResumeAtReset(step: Step, at: number, seed: string, resetAt: number, random: (() => number) | undefined) {
  const s = step.s;
  if (!resumeAtResetOn(s.settings)) return;
  if (s.settings.reach?.continue === false) return note(step, "resume at reset: nothing can continue this agent");
  const r = s.recovery;
  if (r !== null && r.failedTurnId === s.turnId && r.state === "scheduled") return;
  const jitterMs = Math.floor((random ?? seededRandom(`${s.threadId}:${seed}:reset`))() * Math.min(MAX_RESET_JITTER_MS, (resetAt - at) / 10));
  s.recovery = { attempt: 1, max: 1, dueAt: resetAt + jitterMs, state: "scheduled", cancelledReason: null, policy: RESUME_AT_RESET, failedTurnId: s.turnId, turnId: null };
  s.status = "recovery_scheduled";
  note(step, `usage limit: resumes at the reset (${new Date(resetAt + jitterMs).toISOString()})`);
}

const MAX_RESET_JITTER_MS = 30_000;

function resumeAtResetOn(settings: ThreadSettings): boolean {
  return settings.resumeAtReset === true;
}

function fireRecovery(step: Step, at: number, requestAt: number) {
  const s = step.s;
  const r = s.recovery!;
  s.recovery = { ...r, state: "fired" };
  direct(step, {
    key: continueKey(s, r),
    kind: "continue",
    turnId: r.failedTurnId,
    reason: r.policy === RESUME_AT_RESET ? "usage window reset: promptless continuation" : `model at capacity: promptless continuation ${r.attempt}/${r.max ?? "∞"}`,
    origin: "recovery",
    cascade: false,
    at: requestAt,
    dueAt: at,
  });
}

/** Waiting to fire, or fired but its turn not started yet: both can still be called off. */
function recoveryPending(s: ThreadState): boolean {
  const r = s.recovery;
  return r !== null && (r.state === "scheduled" || (r.state === "fired" && r.turnId === null));
}

function cancelRecovery(step: Step, reason: string, status: ThreadStatus | null) {
  const s = step.s;
  s.recovery = { ...s.recovery!, state: "cancelled", cancelledReason: reason };
  if (status) s.status = status;
  note(step, `${continuationLabel(s.recovery)} cancelled: ${reason}`);
}

/** How a continuation is named in the timeline's notes. */
function continuationLabel(r: RecoveryRecord): string {
  return r.policy === RESUME_AT_RESET ? "resume at reset" : r.policy === RESUME_NOW ? "resume" : "capacity recovery";
}

/** On when opted in (capacityRecovery), or when the thread's named policy is a continuation policy. */
function recoveryPolicy(settings: ThreadSettings): PolicyDefinition | null {
  const named = resolvePolicy(settings.policy);
  const own = named?.continuation ? named : null;
  const enabled = settings.capacityRecovery ?? own !== null;
  return enabled ? (own ?? preset("capacity-recovery")) : null;
}

function continueKey(s: ThreadState, r: RecoveryRecord): string {
  if (r.key) return r.key;
  if (r.policy === RESUME_AT_RESET) return `${s.threadId}:${r.failedTurnId ?? "-"}:reset:continue`;
  return `${s.threadId}:${r.failedTurnId ?? "-"}:recovery${r.attempt}:continue`;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

/**
 * The policy for a notice: the thread's (operator's) choice, then the one the event names, if
 * it governs this kind; else the kind's default. Named policies are enforced strictly.
 */
function choosePolicy(step: Step, e: RadarEvent, kind: TroubleKind): { policy: PolicyDefinition | null; explicit: boolean } {
  for (const ref of [step.s.settings.policy, e.policy]) {
    if (ref == null) continue;
    const policy = resolvePolicy(ref);
    if (!policy) note(step, `policy ${typeof ref === "string" ? ref : ref.name} is unknown or invalid: using the default`);
    else if (!policy.continuation && policy.kinds.includes(kind)) return { policy: withGrace(policy, step.s.settings), explicit: true };
  }
  return { policy: withGrace(defaultPolicyFor(kind), step.s.settings), explicit: false };
}

/** A deployment-wide grace override (settings.graceMs) replaces every policy's deadline grace. */
function withGrace(policy: PolicyDefinition | null, settings: ThreadSettings): PolicyDefinition | null {
  if (!policy || settings.graceMs == null || policy.graceMs == null) return policy;
  return { ...policy, graceMs: settings.graceMs };
}

function newEpisode(s: ThreadState, at: number, kind: TroubleKind): EpisodeRecord {
  s.episodeCount += 1;
  return {
    seq: s.episodeCount,
    turnId: s.turnId,
    kind,
    policy: null,
    maxAttempts: null,
    bound: null,
    startedAt: at,
    endedAt: null,
    outcome: null,
    outcomeCode: null,
    outcomeReason: null,
    resetAt: null,
    attempts: [],
    attemptsMade: 1,
    reportedRetryMs: null,
  };
}

/** The calls an episode counts (an episode stored before the count existed counts its notices). */
function callsOf(episode: EpisodeRecord): number {
  return episode.attemptsMade ?? Math.max(1, episode.attempts.at(-1)?.n ?? 1);
}

/** A give-up's own count of calls (when larger than the calls seen) and its total retry time. */
function withReportedCount(episode: EpisodeRecord, e: RadarEvent): EpisodeRecord {
  const reported = positiveInt(e.attemptsMade);
  const retryMs = typeof e.retryMs === "number" && Number.isFinite(e.retryMs) && e.retryMs >= 0 ? e.retryMs : null;
  return { ...episode, attemptsMade: Math.max(callsOf(episode), reported ?? 0), reportedRetryMs: retryMs ?? episode.reportedRetryMs ?? null };
}

function endEpisode(step: Step, at: number, outcome: EpisodeOutcome, code: string | null, reason: string) {
  const s = step.s;
  const episode = s.episode!;
  // Recovered or completed after retry n: that retry was made, call n + 1.
  const worked = outcome === "recovered" || outcome === "completed";
  const attemptsMade = worked ? Math.max(callsOf(episode), (episode.attempts.at(-1)?.n ?? 0) + 1) : callsOf(episode);
  s.episode = { ...episode, endedAt: at, outcome, outcomeCode: code, outcomeReason: reason, attemptsMade };
  // A new episode may replace it within the same step: keep its final form for the server.
  step.endedEpisode = s.episode;
}

function episodeOpen(s: ThreadState): boolean {
  return s.episode !== null && s.episode.outcome === null;
}

function recordError(s: ThreadState, e: RadarEvent, cls: Classification) {
  s.lastError = { kind: cls.kind, httpStatus: cls.httpStatus, code: cls.code, message: e.error?.message ?? null };
}

function isAbandoned(s: ThreadState): boolean {
  return s.status === "failed" && s.lastError?.code === "abandoned";
}

function exhaustedCode(kind: TroubleKind): string {
  if (kind === "capacity") return "capacityRetryExhausted";
  if (kind === "rate_limit" || kind === "usage_limit") return "rateLimitRetryExhausted";
  return "retryExhausted";
}

function stopGraceMs(settings: ThreadSettings): number {
  const grace = settings.stopGraceMs;
  return typeof grace === "number" && Number.isFinite(grace) && grace > 0 && grace <= MAX_ADVICE_MS ? grace : STOP_GRACE_MS;
}

function lastIndexOfAttempt(attempts: AttemptRecord[], n: number): number {
  for (let i = attempts.length - 1; i >= 0; i--) if (attempts[i].n === n) return i;
  return -1;
}

function minBound(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  return b === null ? a : Math.min(a, b);
}

function positiveInt(value: number | null | undefined): number | null {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 1 ? value : null;
}
