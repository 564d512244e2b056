/**
 * The demo simulator: plays the fleet schedule (scenarios.ts) against a running Retry Radar
 * through its public API — canonical events on POST /api/v1/events, native Codex lines on
 * POST /api/v1/ingest/codex — and honours directives like a real source: it long-polls
 * GET /api/v1/directives (and reads the ones listed in ingest responses), ends the turn with a
 * `turn.interrupted` event on `interrupt`, runs a short turn on `continue`, and acknowledges.
 */
import { setMaxListeners } from "node:events";
import { DEFAULT_BACKOFF, nextRetry } from "../relay/backoff";
import { RadarClient, type Directive } from "../relay/client";
import { fleetSchedule, type ActorPlan, type EventSpec, type ScheduledActor } from "./scenarios";

export interface DemoOptions {
  server: string;
  token: string;
  seed?: number;
  /** Stop after this long (real ms); default: run until `signal` aborts. */
  durationMs?: number;
  /** Work-time speed-up (retry waits stay real). Default 1. */
  speed?: number;
  /** Fixes thread ids too (default: derived from the start time, so re-runs do not collide). */
  runTag?: string;
  signal?: AbortSignal;
  log?: (message: string) => void;
  /** Directive long-poll wait (s). */
  pollWaitSeconds?: number;
}

export interface DemoSummary {
  actors: number;
  threads: string[];
  events: number;
  interrupted: number;
  continued: number;
  scenarios: Record<string, number>;
}

type Outgoing = { kind: "events"; body: Record<string, unknown> } | { kind: "codex"; line: string };

class Poster {
  private queue: Outgoing[] = [];
  private sending: Promise<void> | null = null;
  private failures = 0;
  /** Events per request; halved when the server answers 413. */
  private batchSize = 200;
  sent = 0;
  constructor(
    private readonly client: RadarClient,
    private readonly onDirectives: (d: Directive[]) => void,
    private readonly log: (m: string) => void,
  ) {}

  push(item: Outgoing): void {
    this.queue.push(item);
    this.sending ??= new Promise<void>((resolve) => setTimeout(resolve, 100)).then(() => this.drain());
  }

  async flush(): Promise<void> {
    while (this.sending) await this.sending;
  }

  private async drain(): Promise<void> {
    while (this.queue.length) {
      const kind = this.queue[0].kind;
      const n = this.queue.findIndex((q) => q.kind !== kind);
      const batch = this.queue.slice(0, Math.min(n < 0 ? this.queue.length : n, this.batchSize));
      const lines = batch.map((q) => (q.kind === "events" ? JSON.stringify(q.body) : q.line));
      const outcome = await this.client.postLines(kind === "events" ? "/api/v1/events" : "/api/v1/ingest/codex", lines);
      if (outcome.ok) {
        this.queue.splice(0, batch.length);
        this.sent += batch.length;
        if (this.failures) this.log(`radar reachable again; sent ${this.queue.length + batch.length} queued events`);
        this.failures = 0;
        for (const r of outcome.body.rejected) this.log(`radar rejected a demo event: ${r.error}`);
        if (outcome.body.directives.length) this.onDirectives(outcome.body.directives);
        continue;
      }
      if (!outcome.retryable && outcome.status === 413 && batch.length > 1) {
        // Too large for the server: send the same events in smaller batches.
        this.batchSize = Math.ceil(batch.length / 2);
        continue;
      }
      if (!outcome.retryable) {
        this.log(`radar refused ${batch.length} demo events: ${outcome.message}`);
        this.queue.splice(0, batch.length);
        continue;
      }
      this.failures += 1;
      const delay = nextRetry({ failures: this.failures, status: outcome.status, retryAfter: outcome.retryAfter }, { ...DEFAULT_BACKOFF, maxMs: 10_000 }).delayMs;
      if (this.failures === 1 || this.failures % 5 === 0) this.log(`radar unreachable (${outcome.message}), ${this.queue.length} events queued, retrying in ${Math.round(delay / 100) / 10}s`);
      await new Promise((r) => setTimeout(r, delay));
    }
    this.sending = null;
  }
}

interface Actor {
  plan: ActorPlan;
  turnId: string;
  seq: number;
  done: boolean;
  /** Set when a directive ended the actor's script. */
  interrupt: ((d: Directive) => void) | null;
}

export async function runDemo(options: DemoOptions): Promise<DemoSummary> {
  const seed = options.seed ?? 1;
  const speed = options.speed && options.speed > 0 ? options.speed : 1;
  const log = options.log ?? ((m: string) => void process.stderr.write(`[demo] ${m}\n`));
  const runTag = options.runTag ?? Date.now().toString(36);
  const client = new RadarClient(options.server, options.token);
  const stop = new AbortController();
  setMaxListeners(0, stop.signal); // one listener per simulated agent
  const external = options.signal;
  if (external) {
    if (external.aborted) stop.abort();
    else external.addEventListener("abort", () => stop.abort(), { once: true });
  }
  const timer = options.durationMs !== undefined ? setTimeout(() => stop.abort(), options.durationMs) : null;

  const actors = new Map<string, Actor>();
  const summary: DemoSummary = { actors: 0, threads: [], events: 0, interrupted: 0, continued: 0, scenarios: {} };
  const seenDirectives = new Set<string>();
  const running = new Set<Promise<void>>();

  const poster = new Poster(client, (list) => handleDirectives(list), log);

  function emit(actor: Actor, spec: EventSpec): void {
    const now = Date.now();
    const body = typeof spec === "function" ? spec(now) : spec;
    const { meta } = actor.plan;
    const event: Record<string, unknown> = {
      id: `${meta.threadId}#${++actor.seq}`,
      threadId: meta.threadId,
      turnId: actor.turnId,
      at: now,
      agent: meta.agent,
      provider: meta.provider,
      model: meta.model,
      title: meta.title,
      ...(meta.parentThreadId ? { parentThreadId: meta.parentThreadId } : {}),
      ...(meta.policy ? { policy: meta.policy } : {}),
      ...body,
    };
    summary.events += 1;
    poster.push({ kind: "events", body: event });
  }

  function emitNative(actor: Actor, lines: Record<string, unknown>[]): void {
    const now = Date.now();
    for (const line of lines) {
      summary.events += 1;
      poster.push({ kind: "codex", line: `{"at":${now},"message":${JSON.stringify(line)}}` });
    }
  }

  /** Sleeps `ms` unless the actor is interrupted or the demo ends; resolves with what happened. */
  function pause(actor: Actor, ms: number): Promise<"timeout" | "stop" | Directive> {
    return new Promise((resolve) => {
      if (stop.signal.aborted) return resolve("stop");
      const t = ms === Infinity ? null : setTimeout(() => finish("timeout"), ms);
      const onStop = () => finish("stop");
      stop.signal.addEventListener("abort", onStop, { once: true });
      actor.interrupt = (d) => finish(d);
      function finish(result: "timeout" | "stop" | Directive) {
        if (t) clearTimeout(t);
        stop.signal.removeEventListener("abort", onStop);
        actor.interrupt = null;
        resolve(result);
      }
    });
  }

  async function play(plan: ActorPlan): Promise<void> {
    const actor: Actor = { plan, turnId: plan.turnId, seq: 0, done: false, interrupt: null };
    actors.set(plan.meta.threadId, actor);
    summary.actors += 1;
    summary.threads.push(plan.meta.threadId);
    summary.scenarios[plan.scenario] = (summary.scenarios[plan.scenario] ?? 0) + 1;
    for (const step of plan.steps) {
      const wait = step.hang ? Infinity : step.scaled ? step.waitMs / speed : step.waitMs;
      const before = step.hang ? null : await pause(actor, wait);
      if (before === "stop") break;
      if (before && before !== "timeout") {
        await interrupted(actor, before);
        return;
      }
      for (const spec of step.events ?? []) emit(actor, spec);
      if (step.native) emitNative(actor, step.native({ threadId: plan.meta.threadId, turnId: actor.turnId, now: Date.now(), model: plan.meta.model }));
      for (const child of step.spawn ?? []) track(play(child));
      if (step.hang) {
        const r = await pause(actor, Infinity);
        if (r !== "stop" && r !== "timeout") await interrupted(actor, r);
        return;
      }
    }
    actor.done = true;
  }

  async function interrupted(actor: Actor, d: Directive): Promise<void> {
    // Like a real agent: the turn ends interrupted, then the source acknowledges.
    emit(actor, { type: "turn.interrupted" });
    actor.done = true;
    summary.interrupted += 1;
    await poster.flush();
    await ack(d, "acknowledged", `demo agent ${actor.plan.meta.agent} ended turn ${actor.turnId}`);
  }

  async function ack(d: Directive, result: "acknowledged" | "failed", detail: string): Promise<void> {
    for (let i = 1; i <= 5; i++) {
      const r = await client.ack(d.id, result, detail);
      if (r.done) return;
      await new Promise((res) => setTimeout(res, 500 * i));
    }
    log(`could not acknowledge directive ${d.id}`);
  }

  function handleDirectives(list: Directive[]): void {
    for (const d of list) {
      if (seenDirectives.has(d.id)) continue;
      seenDirectives.add(d.id);
      const actor = actors.get(d.threadId);
      if (!actor) {
        void ack(d, "failed", "not a thread of this demo run (the simulator was restarted)");
        continue;
      }
      log(`${d.kind} for ${actor.plan.meta.agent} thread ${d.threadId.slice(0, 13)}… (${d.reason})`);
      if (d.kind === "interrupt") {
        if (actor.interrupt) actor.interrupt(d);
        else void ack(d, "acknowledged", "the turn had already ended");
      } else if (d.kind === "continue") {
        summary.continued += 1;
        track(continuation(actor, d));
      } else {
        void ack(d, "failed", `unknown directive kind ${d.kind}`);
      }
    }
  }

  async function continuation(actor: Actor, d: Directive): Promise<void> {
    actor.turnId = `${actor.plan.turnId}-c${summary.continued}`;
    emit(actor, { type: "turn.started" });
    await poster.flush();
    await ack(d, "acknowledged", `demo agent started continuation turn ${actor.turnId}`);
    if ((await pause(actor, 2_000 / speed)) !== "timeout") return;
    emit(actor, { type: "progress", progressCount: 5 });
    if ((await pause(actor, 2_000 / speed)) !== "timeout") return;
    emit(actor, { type: "turn.completed" });
  }

  function track(p: Promise<void>): void {
    const q = p.catch((error) => log(`actor error: ${(error as Error).message}`)).finally(() => running.delete(q));
    running.add(q);
  }

  async function pollDirectives(): Promise<void> {
    let failures = 0;
    while (!stop.signal.aborted) {
      try {
        handleDirectives(await client.pollDirectives(options.pollWaitSeconds ?? 20, stop.signal));
        failures = 0;
      } catch {
        if (stop.signal.aborted) return;
        failures += 1;
        await new Promise((r) => setTimeout(r, Math.min(10_000, 500 * 2 ** failures)));
      }
    }
  }

  log(`driving ${options.server} (seed ${seed}, speed ${speed}×, run ${runTag})`);
  const polling = pollDirectives();
  const schedule: Iterator<ScheduledActor> = fleetSchedule(seed, runTag);
  const started = Date.now();
  let nextActor = schedule.next().value as ScheduledActor;
  while (!stop.signal.aborted) {
    const due = started + nextActor.startMs / speed;
    const wait = due - Date.now();
    if (wait > 0) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, wait);
        stop.signal.addEventListener("abort", () => {
          clearTimeout(t);
          resolve();
        }, { once: true });
      });
      if (stop.signal.aborted) break;
    }
    track(play(nextActor.plan));
    nextActor = schedule.next().value as ScheduledActor;
  }

  if (timer) clearTimeout(timer);
  await Promise.race([Promise.all(running), new Promise((r) => setTimeout(r, 2_000))]);
  await Promise.race([poster.flush(), new Promise((r) => setTimeout(r, 5_000))]);
  await Promise.race([polling, new Promise((r) => setTimeout(r, 1_000))]);
  log(`stopped: ${summary.actors} threads, ${summary.events} events, ${summary.interrupted} stopped by directives`);
  return summary;
}
