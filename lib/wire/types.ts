/**
 * What the HTTP API and the live stream return, and what the relay and the pages read: the
 * contract between the server and its clients. Times are ISO-8601 UTC strings. The database
 * layer declares these as its return types; clients import them from here, never from lib/db.
 */

import type { AlertState } from "@/lib/alerts/delivery";
import type { InsightsData } from "@/lib/insights/types";
import type { ThreadState } from "@/lib/retry/types";
import type { ThreadControl } from "@/lib/threads/control";

/** One thread as the board, the threads API and the thread page show it. */
export interface ThreadView {
  /** The agent's own thread id. Unique within a source; `key` is unique everywhere. */
  id: string;
  key: number;
  title: string | null;
  agent: string | null;
  provider: string | null;
  model: string | null;
  source: string;
  sourceId: string;
  parentThreadId: string | null;
  status: string;
  turnId: string | null;
  retry: null | {
    kind: string;
    attempt: number | null;
    maxAttempts: number | null;
    nextAttemptAt: string | null;
    nextAttemptEstimated: boolean;
    deadlineAt: string | null;
    resetAt: string | null;
    advisedDelayMs: number | null;
    policy: string | null;
  };
  resetAt: string | null;
  lastError: null | { kind: string | null; httpStatus: number | null; code: string | null; message: string | null };
  updatedAt: string;
  lastEventAt: string | null;
  /** What the thread's source can carry out (lib/threads/control.ts): the controls offered. */
  control: ThreadControl;
  /**
   * The OpenTelemetry threads of the same agent thread joined to this one (lib/db/thread-join.ts):
   * the other paths that report it. Empty on a thread page's parent and children.
   */
  alsoReportedBy: { key: number; source: string; sourceId: string }[];
  /** When a scheduled continuation (capacity recovery, resume at reset) is due. */
  resumeAt: string | null;
  /** Hidden from the board: archived since, or snoozed until. */
  archivedAt: string | null;
  snoozedUntil: string | null;
  /** The usage window this thread waits on: its row on /limits is `#limit-<limitKey>`. */
  limitKey?: string | null;
}

export interface ThreadPage {
  threads: ThreadView[];
  total: number;
  page: number;
  pageSize: number;
}

/** GET /api/v1/threads and the board. */
export interface ThreadBoard extends ThreadPage {
  /** Per-status counts for the same filter without its status part (the header's numbers). */
  counts: Record<string, number>;
  /** How many matching threads Stop all would stop. */
  stoppable: number;
  serverTime: string;
}

export interface AttemptView {
  n: number;
  noticeAt: string;
  advisedDelayMs: number | null;
  expectedAt: string | null;
  estimated: boolean;
  deadlineAt: string | null;
  startedAt: string | null;
  actualGapMs: number | null;
  earlyByMs: number | null;
  httpStatus: number | null;
  code: string | null;
  message: string | null;
}

export interface EpisodeView {
  seq: number;
  turnId: string | null;
  kind: string;
  policy: string | null;
  maxAttempts: number | null;
  startedAt: string;
  endedAt: string | null;
  outcome: string | null;
  outcomeCode: string | null;
  outcomeReason: string | null;
  resetAt: string | null;
  /** Calls made, the first included: the calls seen, or the agent's own count when larger. */
  attemptsMade: number;
  /** The agent's own total time spent retrying (e.g. Claude's `total_retry_duration_ms`), when it says. */
  reportedRetryMs: number | null;
  /** Retries, each with SPEC's index n ≥ 1 (the call it starts is n + 1). */
  attempts: AttemptView[];
}

export interface EventView {
  seq: number;
  type: string;
  nativeType: string | null;
  format: string;
  at: string;
  receivedAt: string;
  lastAt: string | null;
  count: number;
  turnId: string | null;
  attempt: number | null;
  maxAttempts: number | null;
  delayMs: number | null;
  kind: string | null;
  httpStatus: number | null;
  code: string | null;
  message: string | null;
  late: boolean;
  /**
   * The payload as the source sent it, credentials masked (lib/ingest/mask.ts): only where asked for (an event page with
   * `raw=1`, or one event's raw), never in the thread detail.
   */
  raw?: unknown;
  /** The time the source sent when it lay too far ahead of the receive time (the event is shown at its receive time). */
  clampedFrom?: string | null;
}

/** GET /api/v1/threads/by-key/{key}/events: a page of events, newest first. */
export interface EventPage {
  events: EventView[];
  /** The seq to pass as `before` for the page before this one; null when this page reaches the first event. */
  earlier: number | null;
}

/** Events per page on the thread page and in its detail. */
export const EVENT_PAGE_SIZE = 100;

/** GET /api/v1/threads/by-key/{key}/events/{seq}/raw: one event's payload, fetched on demand. */
export interface EventRaw {
  seq: number;
  raw: unknown;
}

/** A directive as the thread page shows it, with its delivery history. */
export interface DirectiveHistory {
  id: string;
  kind: string;
  origin: string;
  reason: string;
  state: string;
  turnId: string | null;
  createdAt: string;
  deliveredAt: string | null;
  acknowledgedAt: string | null;
  result: string | null;
  detail: string | null;
}

/** One thread with everything the thread page shows. */
export interface ThreadDetail {
  thread: ThreadView;
  parent: ThreadView | null;
  children: ThreadView[];
  episodes: EpisodeView[];
  /**
   * The newest page of events (EVENT_PAGE_SIZE), in reducer order, without raw payloads, with
   * the newest page of each thread joined to it (`thread.alsoReportedBy`) merged in.
   */
  events: EventView[];
  /** The seq to pass as `before` for the events before `events`; null when they are all here. */
  earlierEvents: number | null;
  directives: DirectiveHistory[];
  /** The engine's state for the thread, as stored. */
  state: ThreadState;
  /** Usage windows this thread waits on (rows of the Limits page). */
  limits: BlockingWindow[];
  /** The relay's thread this OpenTelemetry thread is joined to and shown with (lib/db/thread-join.ts). */
  joinedTo: ThreadView | null;
}

/** A usage window as a thread page links to it: `/limits#limit-<key>`. */
export interface BlockingWindow {
  key: string;
  provider: string;
  window: string;
  usedPercent: number | null;
  status: string;
  resetAt: string;
}

/** GET /api/v1/threads/{id} and /api/v1/threads/by-key/{key}. */
export interface ThreadDetailResponse extends ThreadDetail {
  serverTime: string;
}

/** Distinct values for the filter menus. */
export interface FilterOptions {
  providers: string[];
  models: string[];
  sources: { id: string; name: string }[];
}

/** A source with its activity and its tokens (never the secrets), as the Sources page shows it. */
export interface SourceOverview {
  id: string;
  name: string;
  policy: string | null;
  capacityRecovery: boolean;
  /** Resume at reset: a usage-limit failure with a known reset is continued at the reset (opt-in). */
  resumeAtReset: boolean;
  /** Incident thresholds of its own (threads, window in ms); null is the global setting. */
  incidentMinThreads: number | null;
  incidentWindowMs: number | null;
  createdAt: string;
  lastSeenAt: string | null;
  /** Last OpenTelemetry export from this source. */
  lastOtlpAt: string | null;
  events: number;
  /** Payload bytes its stored events take (raw and normalized). */
  bytes: number;
  threads: number;
  tokens: { id: string; prefix: string; label: string | null; createdAt: string; revokedAt: string | null }[];
}

/** What each source may store (the deployment's storage quota), shown beside its usage. */
export interface SourceQuota {
  events: number;
  bytes: number;
}

/** A directive as a source sees it (ingest responses and the long-poll). */
export interface DirectiveView {
  id: string;
  threadId: string;
  turnId: string | null;
  kind: string;
  reason: string;
  createdAt: string;
}

/** What every ingestion endpoint answers. */
export interface IngestResponse {
  accepted: number;
  duplicates: number;
  /** Lines that carried nothing the radar uses (no thread, nothing recognised): counted, not stored. */
  ignored: number;
  /** The first rejected lines (at most 100), by index. */
  rejected: { index: number; error: string }[];
  /** Rejected lines beyond those listed. */
  rejectedOmitted: number;
  directives: DirectiveView[];
}

/** GET /api/v1/directives: the long-poll. */
export interface DirectivesResponse {
  directives: DirectiveView[];
  serverTime: string;
}

/** The live stream's `hello` event. */
export interface StreamHello {
  serverTime: string;
}

/**
 * The live stream's `threads` event: the keys of threads whose projection changed, each marked
 * `reorder` when it is new or its status changed (lists filtered or sorted by status may gain,
 * lose or reorder rows). Several changes within ~50 ms arrive as one event.
 */
export interface StreamThreads {
  threads: { key: number; reorder: boolean }[];
  /**
   * When few threads changed: their rows as the unfiltered board shows them (GET
   * /api/v1/threads?keys=…&matching=1 with no filter, read at `serverTime`); a key of `threads`
   * with no row here is not on that board. Absent for a burst: boards then read rows by key.
   */
  rows?: ThreadView[];
  serverTime: string;
}

/** The live stream's `limits` and `incidents` events: some usage window or incident changed, refetch. */
export interface StreamLimits {
  serverTime: string;
}

/** Most keys one `?keys=` request may name. */
export const MAX_THREAD_ROWS = 100;

/** GET /api/v1/threads?keys=1,2,3: the current rows of those threads (unknown keys are left out). */
export interface ThreadRows {
  threads: ThreadView[];
  serverTime: string;
}

/** GET /api/v1/insights: every chart's numbers (fields: lib/insights/types.ts). */
export interface InsightsResponse extends InsightsData {
  serverTime: string;
}

/** One person on the People page. */
export interface PersonOverview {
  id: string;
  email: string;
  name: string;
  role: "viewer" | "operator" | "admin";
  disabled: boolean;
  createdAt: string;
  /** While failed sign-ins hold this account back (from some address or from all). */
  lockedUntil: string | null;
  /** Failed sign-ins naming this account within the throttling window (lib/auth/lockout.ts). */
  failures: number;
}

/** A client address whose failed sign-ins hold back every sign-in from it, on the People page. */
export interface SignInAddressOverview {
  address: string;
  /** Failed sign-ins from it within the throttling window. */
  failures: number;
  lockedUntil: string;
}

/** One API key on the People page (never the key itself: only its first characters). */
export interface ApiKeyOverview {
  id: string;
  name: string;
  role: "viewer" | "operator" | "admin";
  prefix: string;
  /** The owner's email; null for a service account. */
  owner: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** One usage window (GET /api/v1/limits and the Limits page): the latest snapshot of (source, account, provider, window). */
export interface LimitWindowView {
  /** Stable anchor: the page's row is `#limit-<key>`. */
  key: string;
  source: string;
  sourceId: string;
  account: string | null;
  provider: string;
  window: string;
  /** 0–100; null when only the status is known. */
  usedPercent: number | null;
  windowMinutes: number | null;
  resetAt: string | null;
  /** ok, warning or rejected. */
  status: string;
  /** Why the provider refused, when it said (Codex `rateLimitReachedType`). */
  reachedType: string | null;
  observedAt: string;
  /** The snapshot is old, or the window has reset since: its fill no longer holds. */
  stale: boolean;
  /** The agent's thread the latest snapshot came with, when known. */
  threadId: string | null;
  /** Threads of this source waiting on a usage limit that resets with this window. */
  blockedThreads: { key: number; id: string; title: string | null; status: string }[];
  /** Recent snapshots, oldest first. */
  history: { at: string; usedPercent: number | null }[];
}

/** GET /api/v1/limits. */
export interface LimitsView {
  windows: LimitWindowView[];
  serverTime: string;
}

/**
 * The OTLP/HTTP export response (Export{Logs,Trace,Metrics}ServiceResponse, JSON): `{}` when
 * every record was accepted, else how many were rejected and why.
 */
export interface OtlpExportResponse {
  partialSuccess?: { rejectedLogRecords?: number; rejectedSpans?: number; rejectedDataPoints?: number; errorMessage: string };
}

/** One thread of an incident: its notices there and how it ended up. */
export interface IncidentThreadView {
  key: number;
  id: string;
  title: string | null;
  source: string;
  sourceId: string;
  /** The thread's status now. */
  status: string;
  firstNoticeAt: string;
  lastNoticeAt: string;
  notices: number;
  recoveredAt: string | null;
}

/** One incident: many threads hitting one wall (GET /api/v1/incidents, the board's banners). */
export interface IncidentView {
  id: string;
  state: "open" | "closed";
  kind: string;
  /** Provider and model, or the source for usage limits. */
  provider: string | null;
  model: string | null;
  sourceId: string | null;
  /** "openai · gpt-5.5", or the source's name for usage limits. */
  scope: string;
  startedAt: string;
  lastNoticeAt: string;
  endedAt: string | null;
  closedBy: "quiet" | "recovered" | null;
  threadCount: number;
  /** The keys of its threads (the board marks them). */
  threadKeys: number[];
  /** Threads of it still retrying or waiting (what Stop all in this incident would stop). */
  stoppable: number;
  notices: number;
  resetAt: string | null;
  timeLostMs: number;
  /** Who is on it: the operator who acknowledged it, and when. */
  acknowledgedBy: string | null;
  acknowledgedAt: string | null;
  /** Its alerts are not sent until then; null when not silenced. */
  silencedUntil: string | null;
}

/** The `?state=` filter of GET /api/v1/incidents and the incidents page. */
export const INCIDENT_STATE_FILTERS = ["all", "open", "closed"] as const;
export type IncidentStateFilter = (typeof INCIDENT_STATE_FILTERS)[number];

/** GET /api/v1/incidents. */
export interface IncidentList {
  incidents: IncidentView[];
  serverTime: string;
}

/** GET /api/v1/incidents/{id}: the incident, its threads and its notices per minute by thread. */
export interface IncidentDetail extends IncidentView {
  threads: IncidentThreadView[];
  /** Retry notices per minute and thread within the incident's span. */
  timeline: { minute: string; thread: number; notices: number }[];
  /** Attempts of its threads in its span that went out before the advised time. */
  earlyRetries: number;
  /** Operators' notes, oldest first. */
  notes: { at: string; actor: string; text: string }[];
  serverTime: string;
}

/** A webhook alerts go to (its secret is never shown again after it is created). */
export interface AlertDestinationView {
  id: string;
  name: string;
  url: string;
  format: "json" | "slack";
  createdAt: string;
  createdBy: string;
}

/** A rule: one alert event sent to one destination. */
export interface AlertRuleView {
  id: string;
  destinationId: string;
  event: string;
  threshold: number | null;
  createdAt: string;
  createdBy: string;
}

/** One attempt to deliver an alert. */
export interface AlertAttemptView {
  at: string;
  status: number | null;
  error: string | null;
  result: AlertState;
  durationMs: number;
}

/** An alert in the outbox, with its attempts. */
export interface AlertOutboxView {
  id: number;
  destinationId: string;
  destination: string;
  event: string;
  state: AlertState;
  text: string;
  attempts: number;
  createdAt: string;
  nextAttemptAt: string;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: string | null;
  history: AlertAttemptView[];
}

/** GET /api/v1/alerts: destinations, rules, and the latest alerts with their deliveries. */
export interface AlertsOverview {
  destinations: AlertDestinationView[];
  rules: AlertRuleView[];
  outbox: AlertOutboxView[];
  /** Conditions raised and not cleared (a silent source, a relay that stopped polling…). */
  conditions: { key: string; event: string; subject: string; raisedAt: string }[];
  serverTime: string;
}
