/**
 * Directives from the radar (Stop retrying, a policy bound, capacity recovery) → what this
 * relay does about them, and the loop that receives them (long-poll + ingest responses),
 * carries them out one at a time and acknowledges each with the outcome.
 */
import { DEFAULT_BACKOFF, nextRetry } from "./backoff";
import { HttpError, networkMessage, type Directive, type RadarClient } from "./client";
import { formatDuration, type Logger } from "./log";

export type RelayMode = "codex-app-server" | "codex-exec" | "claude" | "pipe";

export interface DirectiveContext {
  mode: RelayMode;
  /** Threads this relay has seen in its agent's output. */
  knownThreads: ReadonlySet<string>;
  /** app-server: the thread's turn in progress (null when idle/unknown). */
  currentTurn?: (threadId: string) => string | null;
  /** codex-exec / claude: is the agent process still running? */
  childRunning?: boolean;
  /** pipe: print directives for the harness instead of acting. */
  pipeDirectives?: "print" | "none";
}

export type DirectiveAction =
  | { type: "rpc"; method: "turn/interrupt"; params: { threadId: string; turnId: string } }
  | { type: "rpc"; method: "turn/start"; params: { threadId: string; input: unknown[] } }
  /** End the agent process gracefully (SIGINT, then SIGTERM after the grace period). */
  | { type: "end-process" }
  /** Print the directive (pipe mode) — the harness acts and acknowledges. */
  | { type: "print" }
  /** Acknowledge as failed right away. */
  | { type: "fail"; detail: string }
  /** Not for this relay (another relay with the same token supervises that thread): leave it. */
  | { type: "skip"; reason: string };

export function planDirective(d: Directive, ctx: DirectiveContext): DirectiveAction {
  if (ctx.mode === "pipe") {
    return ctx.pipeDirectives === "none" ? { type: "skip", reason: "pipe mode with --directives none" } : { type: "print" };
  }
  if (!ctx.knownThreads.has(d.threadId)) {
    return { type: "skip", reason: `thread ${d.threadId} is not supervised by this relay` };
  }
  if (d.kind === "interrupt") {
    if (ctx.mode === "codex-app-server") {
      const turnId = d.turnId ?? ctx.currentTurn?.(d.threadId) ?? null;
      if (!turnId) return { type: "fail", detail: `no turn in progress on thread ${d.threadId}; nothing to interrupt` };
      return { type: "rpc", method: "turn/interrupt", params: { threadId: d.threadId, turnId } };
    }
    if (!ctx.childRunning) return { type: "fail", detail: `the ${ctx.mode} process had already exited; nothing to interrupt` };
    return { type: "end-process" };
  }
  if (d.kind === "continue") {
    if (ctx.mode === "codex-app-server") {
      const busy = ctx.currentTurn?.(d.threadId);
      if (busy) return { type: "fail", detail: `turn ${busy} is still in progress on thread ${d.threadId}; not starting a continuation` };
      // Codex accepts an empty input for a promptless continuation (verified with codex-cli 0.171.0).
      return { type: "rpc", method: "turn/start", params: { threadId: d.threadId, input: [] } };
    }
    return { type: "fail", detail: `continue is not supported in ${ctx.mode} mode (a one-shot process); start a new run to continue` };
  }
  return { type: "fail", detail: `unknown directive kind "${d.kind}"` };
}

/**
 * What a relay in this mode announces it can carry out when it polls (the radar offers only these
 * controls): app-server interrupts and starts turns; one-shot processes can only be ended; pipe
 * mode prints directives for a harness, which may do either.
 */
export function relayCapabilities(mode: RelayMode): ("interrupt" | "continue")[] {
  return mode === "codex-exec" || mode === "claude" ? ["interrupt"] : ["interrupt", "continue"];
}

export interface DirectiveOutcome {
  result: "acknowledged" | "failed";
  detail: string;
}

export interface DirectiveRunnerOptions {
  client: RadarClient;
  log: Logger;
  plan: (d: Directive) => DirectiveAction;
  /** Carries out rpc / end-process / print actions. */
  execute: (d: Directive, action: DirectiveAction) => Promise<DirectiveOutcome | null>;
  /** Called before an acknowledgement is sent (e.g. flush the agent's lines first, bounded). */
  beforeAck?: () => Promise<void>;
  pollWaitSeconds?: number;
  /** Announced on every poll (relayCapabilities). */
  capabilities?: readonly string[];
}

/** Receives directives (deduplicated by id), runs them in order, acknowledges with retries. */
export class DirectiveRunner {
  private seen = new Set<string>();
  private queue: Directive[] = [];
  private working: Promise<void> | null = null;
  private acks = new Set<Promise<void>>();
  private abort = new AbortController();
  private polling: Promise<void> | null = null;
  private stopped = false;
  readonly handled: { directive: Directive; action: DirectiveAction; outcome: DirectiveOutcome | null }[] = [];

  constructor(private readonly o: DirectiveRunnerOptions) {}

  offer(directives: Directive[]): void {
    for (const d of directives) {
      if (!d || typeof d.id !== "string" || this.seen.has(d.id)) continue;
      this.seen.add(d.id);
      this.queue.push(d);
    }
    this.kick();
  }

  /**
   * Starts the worker unless it runs. The worker may finish synchronously (a directive that is
   * only skipped awaits nothing), so "not running" is recorded when its promise settles, and
   * anything queued meanwhile starts a new round.
   */
  private kick(): void {
    if (this.working || this.queue.length === 0) return;
    this.working = this.work().finally(() => {
      this.working = null;
      this.kick();
    });
  }

  startPolling(): void {
    if (this.polling) return;
    this.polling = this.poll();
  }

  /** Stops polling; waits (bounded) for directives in progress and their acknowledgements. */
  async stop(timeoutMs: number): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    const deadline = new Promise((r) => setTimeout(r, timeoutMs));
    await Promise.race([Promise.all([this.working, ...this.acks, this.polling]), deadline]);
  }

  /** Resolves when nothing is queued, running or waiting for an acknowledgement. */
  async idle(): Promise<void> {
    while (this.working || this.acks.size) await Promise.all([this.working, ...this.acks]);
  }

  private async work(): Promise<void> {
    while (this.queue.length) {
      const d = this.queue.shift()!;
      const action = this.o.plan(d);
      let outcome: DirectiveOutcome | null;
      if (action.type === "skip") {
        this.o.log.info(`ignoring directive ${d.id} (${d.kind}): ${action.reason}`);
        // It may become ours later (an ingest response for a thread we report lists it again).
        this.seen.delete(d.id);
        outcome = null;
      } else if (action.type === "fail") {
        outcome = { result: "failed", detail: action.detail };
      } else {
        this.o.log.info(`directive ${d.id}: ${d.kind} thread ${d.threadId}${d.turnId ? ` turn ${d.turnId}` : ""} (${d.reason})`);
        try {
          outcome = await this.o.execute(d, action);
        } catch (error) {
          outcome = { result: "failed", detail: `relay error: ${(error as Error).message}` };
        }
      }
      this.handled.push({ directive: d, action, outcome });
      if (outcome) {
        this.o.log.info(`directive ${d.id} ${outcome.result}: ${outcome.detail}`);
        const ack = this.ack(d, outcome);
        this.acks.add(ack);
        void ack.finally(() => this.acks.delete(ack));
      }
    }
  }

  private async ack(d: Directive, outcome: DirectiveOutcome): Promise<void> {
    if (this.o.beforeAck) await this.o.beforeAck().catch(() => undefined);
    for (let failures = 1; ; failures++) {
      const r = await this.o.client.ack(d.id, outcome.result, outcome.detail);
      if (r.done) {
        if (r.status !== null && r.status >= 300) this.o.log.warn(`acknowledging directive ${d.id}: ${r.message}`);
        return;
      }
      if (this.stopped && failures > 3) {
        this.o.log.error(`could not acknowledge directive ${d.id} (${outcome.result}: ${outcome.detail}): ${r.message}`);
        return;
      }
      const wait = nextRetry({ failures, status: r.status }, DEFAULT_BACKOFF).delayMs;
      this.o.log.warn(`acknowledging directive ${d.id} failed (${r.message}); retrying in ${formatDuration(wait)}`);
      await new Promise((resolve) => setTimeout(resolve, this.stopped ? Math.min(wait, 500) : wait));
    }
  }

  private async poll(): Promise<void> {
    const wait = this.o.pollWaitSeconds ?? 25;
    let failures = 0;
    while (!this.stopped) {
      try {
        const directives = await this.o.client.pollDirectives(wait, this.abort.signal, this.o.capabilities);
        failures = 0;
        this.offer(directives);
      } catch (error) {
        if (this.stopped) return;
        failures += 1;
        const status = error instanceof HttpError ? error.status : null;
        const retryAfter = error instanceof HttpError ? error.retryAfter : null;
        const delay = nextRetry({ failures, status, retryAfter }, { ...DEFAULT_BACKOFF, maxMs: 15_000 }).delayMs;
        const message = error instanceof HttpError ? error.message : networkMessage(error);
        if (failures === 1 || failures % 10 === 0) this.o.log.warn(`directive long-poll failed (${message}); retrying in ${formatDuration(delay)}`);
        else this.o.log.debug(`directive long-poll failed (${message}); retrying in ${formatDuration(delay)}`);
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, delay);
          this.abort.signal.addEventListener("abort", () => {
            clearTimeout(t);
            resolve();
          });
        });
      }
    }
  }
}
