/**
 * The vocabulary of Retry Radar's engine. Pure types: everything in lib/retry is
 * free of I/O and takes the clock as an argument, so these are the contract between the
 * ingestion adapters (which produce RadarEvents), the reducer (which turns them into
 * ThreadState) and the server (which persists state and sends directives).
 * All times are epoch milliseconds (UTC).
 */

/**
 * What kind of trouble a failure is. The one list of kinds: the filter, policy validation, labels
 * and chart colours all derive from it, so a new kind is added here and wherever the type checker
 * then asks for its label.
 */
export const TROUBLE_KINDS = ["rate_limit", "capacity", "usage_limit", "transport", "auth", "invalid_request", "other"] as const;
export type TroubleKind = (typeof TROUBLE_KINDS)[number];

export function isTroubleKind(value: unknown): value is TroubleKind {
  return (TROUBLE_KINDS as readonly unknown[]).includes(value);
}

/** Derived thread status: the engine derives it from events, nobody sets it by hand. */
export const THREAD_STATUSES = [
  "running",
  "retrying",
  "waiting_reset",
  "stalled",
  "recovered",
  "exhausted",
  "failed",
  "recovery_scheduled",
  "stopping",
  "stopped",
  "broken",
  "completed",
  "idle",
] as const;
export type ThreadStatus = (typeof THREAD_STATUSES)[number];

export function isThreadStatus(value: unknown): value is ThreadStatus {
  return (THREAD_STATUSES as readonly unknown[]).includes(value);
}

/**
 * Canonical event types (POST /api/v1/events). `limit.updated` is a usage-window snapshot: it is
 * stored on its thread when it names one, and changes no retry state.
 */
export const EVENT_TYPES = [
  "thread.started",
  "turn.started",
  "progress",
  "retry",
  "attempt",
  "turn.completed",
  "turn.failed",
  "turn.interrupted",
  "interrupt.requested",
  "interrupt.ack",
  "limit.updated",
] as const;
export type CanonicalEventType = (typeof EVENT_TYPES)[number];

/**
 * Event types the server feeds the reducer on its own behalf (never accepted from a source):
 * - `stop.requested`: an operator pressed Stop retrying, or a parent's bound cascaded a stop.
 * - `directive.acked`: a source acknowledged (or failed) a directive through the ack endpoint.
 * - `settings.changed`: the source's policy / capacity-recovery opt-in changed.
 * - `thread.archived`: archive or snooze (cancels a pending capacity recovery or resume at reset).
 * - `resume.requested`: an operator pressed Resume now on an ended thread (a `continue`).
 * - `retry.requested`: an operator pressed Retry now on a thread waiting out a backoff (an
 *   interrupt, then a `continue` once the source confirmed it).
 * - `unknown`: a native message kind we do not understand; stored and shown, changes nothing.
 */
export type InternalEventType =
  | "stop.requested"
  | "directive.acked"
  | "settings.changed"
  | "thread.archived"
  | "resume.requested"
  | "retry.requested"
  | "unknown";

export type RadarEventType = CanonicalEventType | InternalEventType;

/** Error details as reported by an agent; every field optional and kept as given. */
export interface ErrorReport {
  httpStatus?: number | null;
  /** Typed code: a codexErrorInfo value ("serverOverloaded", "responseStreamDisconnected"…) or a provider code. */
  code?: string | null;
  message?: string | null;
  /** `Retry-After` header value as sent: delta-seconds or an HTTP-date. */
  retryAfter?: string | number | null;
  /** Response headers (lower-cased names), e.g. x-ratelimit-reset-requests, anthropic-ratelimit-*-reset. */
  headers?: Record<string, string> | null;
  /** Anything else the agent said: provider body, additionalDetails, retry_after_ms, resetsAt… */
  details?: unknown;
}

/** A retry policy: a preset (policies.ts) or a custom one with the same knobs. */
export interface PolicyDefinition {
  name: string;
  /** Kinds this policy governs; a notice of another kind falls back to the default for that kind. */
  kinds: TroubleKind[];
  /** Maximum retry index n allowed; null = unlimited. */
  maxAttempts: number | null;
  /** Delay before retry n when the source gave no advice: base·factor^(n−1), capped. */
  baseDelayMs: number;
  factor: number;
  maxDelayMs: number;
  /** Explicit per-attempt minimums (codex-capacity: 30 s, 120 s, 300 s); the last repeats. Overrides base/factor. */
  scheduleMs?: number[];
  /** Jitter as fractions of the delay: the wait lies in [delay·(1+jitterMin), delay·(1+jitterMax)]. */
  jitterMin: number;
  jitterMax: number;
  /** Advice above this fails the episode at once, reporting the reset time (null = no cap). */
  adviceCapMs: number | null;
  /** Deadline = latest expected attempt + grace; null = no deadline (capacity-recovery). */
  graceMs: number | null;
  /**
   * True for a policy that schedules promptless continuations after a terminal failure
   * (capacity-recovery) instead of watching a source's own retries.
   */
  continuation?: boolean;
}

export type PolicyRef = string | PolicyDefinition;

/**
 * The single input of the reducer. Adapters turn native lines into these; the server adds
 * `seq` (storage order) before reducing.
 */
export interface RadarEvent {
  /** Storage sequence: the tie-breaker after `at` for out-of-order delivery. */
  seq: number;
  type: RadarEventType;
  /** Event time (epoch ms). */
  at: number;
  threadId: string;
  turnId?: string | null;
  parentThreadId?: string | null;
  agent?: string | null;
  provider?: string | null;
  model?: string | null;
  title?: string | null;
  /** Policy named by the event (preset name or custom definition). */
  policy?: PolicyRef | null;
  /** Retry index n (first retry = 1) and the source's own maximum, when it says. */
  attempt?: number | null;
  maxAttempts?: number | null;
  /** Delay the source itself announced (Claude retry_delay_ms, canonical delayMs). Exact, not an estimate. */
  delayMs?: number | null;
  /**
   * A give-up's own count of the calls it made, the first included (Claude's `total_attempts`), and
   * the total time it says it spent retrying (`total_retry_duration_ms`): kept on the episode.
   */
  attemptsMade?: number | null;
  retryMs?: number | null;
  /**
   * `attempt` with `error`: a call that failed. `at` is when it started, `endedAt` when it ended
   * (its failure known). Failed calls that follow each other are retries even when no notice came.
   */
  endedAt?: number | null;
  /**
   * `turn.completed` from a source that marks no failed turn and whose calls went in another
   * export (Codex's traces): the turn ended as its last call did, failed if that call failed.
   */
  lastCallDecides?: boolean | null;
  error?: ErrorReport | null;
  /** For `retry`: false means the source gave up (terminal notice). Default true for `retry`. */
  willRetry?: boolean | null;
  /** Coalesced progress: how many deltas this event stands for, and the time of the last one. */
  progressCount?: number | null;
  lastAt?: number | null;
  /** `stop.requested`: who and why; `directive.acked`: the directive and its result. */
  actor?: string | null;
  reason?: string | null;
  directiveId?: string | null;
  ackResult?: "acknowledged" | "failed" | null;
  /** Whether this thread is a subagent (has a parent) is known from parentThreadId. */
  /** `settings.changed`: the source's settings. */
  settings?: ThreadSettings | null;
  /** Open approval / user question on the thread (Codex activeFlags): cancels capacity recovery. */
  awaitingUser?: boolean | null;
  /**
   * Added by the server, never by a source: the exact window reset the source reported apart from
   * this event for the minute its error names only (minuteOnlyResetRange). Stored with the event,
   * so a replay reads the same reset.
   */
  windowResetAt?: number | null;
}

export interface ThreadSettings {
  policy?: PolicyRef | null;
  capacityRecovery?: boolean;
  /** Opt-in: a usage-limit failure with a known reset schedules a `continue` at the reset. */
  resumeAtReset?: boolean;
  /**
   * What the thread's source can carry out on the engine's own initiative (its policy interrupts,
   * its continuations); absent means both. Set by the server from the source's announcement.
   */
  reach?: { interrupt: boolean; continue: boolean };
  /** How long a stop may stay unacknowledged before the thread is `broken` (default STOP_GRACE_MS). */
  stopGraceMs?: number;
  /** Replaces every policy's deadline grace (the "+ 60 s"), e.g. for short end-to-end tests. */
  graceMs?: number;
}

/** Where a piece of retry advice came from (see advice.ts). */
export type AdviceSource =
  | "retry-after"
  | "retry-after-date"
  | "message"
  | "retry_after_ms"
  | "retry_delay_ms"
  | "x-ratelimit-reset"
  | "anthropic-reset"
  | "resetsAt"
  | "usage-limit-text"
  | "delayMs";

/** One valid hint: wait `delayMs` from the notice; `resetAt` when the hint names a window reset. */
export interface AdviceHint {
  source: AdviceSource;
  delayMs: number;
  resetAt?: number;
}

/** Outcome of a retry episode. */
export type EpisodeOutcome =
  | "recovered"
  | "exhausted"
  | "stopped"
  | "failed"
  | "completed"
  | "interrupted"
  | "superseded";

/** The public API's `retry` field: the pending retry of the current turn. */
export interface RetryView {
  kind: TroubleKind;
  attempt: number;
  maxAttempts: number | null;
  nextAttemptAt: number | null;
  nextAttemptEstimated: boolean;
  deadlineAt: number | null;
  resetAt: number | null;
  advisedDelayMs: number | null;
  policy: string | null;
}

export interface LastError {
  kind: TroubleKind;
  httpStatus: number | null;
  code: string | null;
  message: string | null;
}

export interface AttemptRecord {
  /** Retry index (first retry = 1). */
  n: number;
  noticeAt: number;
  /** Authoritative advice (longest valid hint), null when nobody advised. */
  advisedDelayMs: number | null;
  hints: AdviceHint[];
  expectedAt: number | null;
  estimated: boolean;
  deadlineAt: number | null;
  /** When the source reported starting this attempt (`attempt` event). */
  startedAt: number | null;
  /** How much sooner than advised the retry happened. */
  earlyByMs: number | null;
  httpStatus: number | null;
  code: string | null;
  message: string | null;
}

export interface EpisodeRecord {
  /** 1-based count of episodes in this thread. */
  seq: number;
  turnId: string | null;
  kind: TroubleKind;
  policy: string | null;
  /** The maximum shown as "n of m": the source's own when it says, else the enforced bound. */
  maxAttempts: number | null;
  /** The attempt bound actually enforced (null = unlimited). */
  bound: number | null;
  startedAt: number;
  endedAt: number | null;
  outcome: EpisodeOutcome | null;
  outcomeCode: string | null;
  outcomeReason: string | null;
  resetAt: number | null;
  attempts: AttemptRecord[];
  /**
   * Calls made in this episode, the first included: the calls seen (a notice n says call n failed,
   * a started retry n is call n + 1), or the source's own count when it is larger.
   */
  attemptsMade: number;
  /** The source's own total time spent retrying, when it says (Claude's `total_retry_duration_ms`). */
  reportedRetryMs: number | null;
}

/**
 * A promptless continuation of an ended turn: capacity recovery after a terminal capacity failure,
 * resume at reset after a usage limit (both opt-in), or an operator's Resume now / Retry now.
 * `policy` tells which (the continuation policy's name, RESUME_AT_RESET or RESUME_NOW).
 */
export interface RecoveryRecord {
  /** Continuation k of `max`. */
  attempt: number;
  max: number | null;
  dueAt: number;
  state: "scheduled" | "fired" | "cancelled" | "exhausted";
  cancelledReason: string | null;
  policy: string;
  /** The turn whose failure this recovery owns (one owner per failure). */
  failedTurnId: string | null;
  /** The continuation's own turn, once it started. */
  turnId: string | null;
  /** The continue directive's key when it is not derived from the attempt (an operator's request). */
  key?: string;
}

export const RESUME_AT_RESET = "resume-at-reset";
export const RESUME_NOW = "resume-now";

/** The last interrupt asked of the source (operator stop or policy bound) and its fate. */
export interface InterruptRecord {
  key: string;
  turnId: string | null;
  origin: "operator" | "policy";
  actor: string | null;
  reason: string;
  requestedAt: number;
  graceEndsAt: number;
  result: "pending" | "acknowledged" | "unconfirmed" | "superseded";
  /** A stop of a broken or abandoned thread returns it to idle when acknowledged. */
  thenIdle: boolean;
  /** Retry now: once the source confirms the interrupt, the turn is continued. */
  thenContinue?: boolean;
}

/** What the server must send to a source. `key` is deterministic so a replay never duplicates. */
export interface DirectiveIntent {
  key: string;
  kind: "interrupt" | "continue";
  turnId: string | null;
  reason: string;
  origin: "operator" | "policy" | "recovery";
  /** The server must also stop every active descendant thread. */
  cascade: boolean;
  /** When it is requested: the moment it can first be delivered (an interrupt's grace starts here). */
  at: number;
  /** When the rule that asks for it fired; earlier than `at` when a timer was caught up late. */
  dueAt: number;
}

/** How one reduce/tick call applied. */
export interface AppliedStep {
  /** The event arrived after its turn had ended: kept in the timeline, changed nothing. */
  late: boolean;
  earlyByMs: number | null;
  note: string | null;
}

/** Everything the engine knows about one thread. JSON-serialisable: the server stores it. */
export interface ThreadState {
  threadId: string;
  parentThreadId: string | null;
  agent: string | null;
  provider: string | null;
  model: string | null;
  title: string | null;
  settings: ThreadSettings;
  status: ThreadStatus;
  turnId: string | null;
  /** The current turn still runs as far as we know (not ended by the source or by us). */
  turnOpen: boolean;
  retry: RetryView | null;
  lastError: LastError | null;
  episode: EpisodeRecord | null;
  episodeCount: number;
  recovery: RecoveryRecord | null;
  interrupt: InterruptRecord | null;
  /** Earliest future time at which `tick` would change something. */
  wakeAt: number | null;
  lastEventAt: number | null;
  lastSeq: number | null;
  lastProgressAt: number | null;
  progressCount: number;
  /**
   * The latest exact window reset an informational event named (Codex sends its account's
   * `resetsAt` just before a usage-limit error whose text names the minute only). Kept so the
   * error reads its reset to the second even when the two arrive in different batches.
   */
  windowReset: number | null;
  /**
   * The latest failed call (an `attempt` with `error`) no retry notice has covered yet: when the
   * next call starts, it was a retry, noticed when the failed call ended.
   */
  failedCall: FailedCall | null;
}

export interface FailedCall {
  startedAt: number;
  endedAt: number;
  error: ErrorReport | null;
}

/**
 * What one reduce/tick call asks of the server besides its new state: never stored, it
 * describes only that call.
 */
export interface StepEffects {
  directives: DirectiveIntent[];
  applied: AppliedStep | null;
  /** The episode this step ended, in its final form (it may already be replaced by a new one). */
  endedEpisode: EpisodeRecord | null;
}

/** One engine step: the state to save and the effects to carry out. */
export interface StepResult {
  state: ThreadState;
  effects: StepEffects;
}
