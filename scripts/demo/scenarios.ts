/**
 * The demo fleet as pure data: a deterministic (given the seed) schedule of actors — one per
 * thread — each with a script of steps. The simulator (simulator.ts) plays them against a
 * server in real time. Waits marked `scaled` are "the agent is working" and shrink with
 * --speed; retry waits are real, because the radar measures them against the advice.
 */
import { createRng, hashSeed, type Rng } from "./random";

/** A canonical event for POST /api/v1/events, minus what the simulator fills in (id, at, threadId, turnId, meta). */
export type EventBody = Record<string, unknown> & { type: string };
/** The account label the demo's usage windows are reported under. */
export const DEMO_ACCOUNT = "demo-team";

/** An event, or one computed at emission time (e.g. a usage-limit reset clock time). */
export type EventSpec = EventBody | ((now: number) => EventBody);

export interface Step {
  waitMs: number;
  /** Work time (divided by speed) rather than a retry wait (kept as is). */
  scaled: boolean;
  events?: EventSpec[];
  /** Native Codex app-server notifications (posted to /api/v1/ingest/codex), built at emission time. */
  native?: (ctx: { threadId: string; turnId: string; now: number; model: string }) => Record<string, unknown>[];
  /** Subagents started at this step. */
  spawn?: ActorPlan[];
  /** Go silent: wait for a directive (or the end of the demo), never finishing the turn. */
  hang?: boolean;
}

export interface ThreadMeta {
  threadId: string;
  agent: string;
  provider: string;
  model: string;
  title: string;
  parentThreadId?: string;
  policy?: string;
}

export interface ActorPlan {
  scenario: ScenarioName;
  meta: ThreadMeta;
  turnId: string;
  steps: Step[];
}

export interface ScheduledActor {
  /** When the actor starts, in virtual ms from the demo's start (divided by speed when played). */
  startMs: number;
  plan: ActorPlan;
}

export type ScenarioName =
  | "steady"
  | "rate-limit-advised"
  | "rate-limit-early"
  | "codex-reconnecting"
  | "capacity-storm"
  | "claude-overloaded"
  | "usage-limit"
  | "stall"
  | "long-wait"
  | "exhausted-attempts"
  | "subagents"
  | "recipe-runner"
  | "native-codex";

const WEIGHTS: (readonly [ScenarioName, number])[] = [
  ["steady", 14],
  ["rate-limit-advised", 12],
  ["rate-limit-early", 7],
  ["codex-reconnecting", 8],
  ["capacity-storm", 7],
  ["claude-overloaded", 8],
  ["usage-limit", 6],
  ["stall", 7],
  ["long-wait", 6],
  ["exhausted-attempts", 5],
  ["subagents", 7],
  ["recipe-runner", 6],
  ["native-codex", 6],
];

/** The first actors: every kind of trouble on the board within the first seconds. */
const OPENING: ScenarioName[] = [
  "rate-limit-advised",
  "usage-limit",
  "steady",
  "long-wait",
  "capacity-storm",
  "claude-overloaded",
  "stall",
  "subagents",
  "native-codex",
  "rate-limit-early",
];

const CODEX_MODELS = ["gpt-5.5", "gpt-5.5", "gpt-5.4-mini", "o4-mini"];
const CLAUDE_MODELS = ["claude-sonnet-4-5", "claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5"];
const PROXIES = [
  { provider: "openrouter", models: ["openai/gpt-5.5", "anthropic/claude-sonnet-4-5", "google/gemini-2.5-pro"] },
  { provider: "litellm-proxy", models: ["gpt-5.4-mini", "claude-haiku-4-5", "llama-4-maverick"] },
];
const TASKS = [
  "Fix flaky checkout integration test",
  "Migrate auth middleware to the new session API",
  "Add pagination to /v2/orders",
  "Upgrade React Router to v7",
  "Investigate memory leak in the indexer",
  "Write docs for the billing webhooks",
  "Refactor payment retries into a queue",
  "Port CSV exporter to streams",
  "Triage nightly e2e failures",
  "Bump dependencies and fix type errors",
  "Add OpenTelemetry spans to the ingest path",
  "Split monolith config into per-service files",
  "Harden rate limiter against clock skew",
  "Generate fixtures for the search ranking tests",
  "Translate onboarding emails (de, fr, ja)",
  "Remove dead feature flags",
];
const SUBTASKS = ["Review the diff", "Run the test suite", "Update the changelog", "Search for other call sites", "Write the migration"];

const S = 1000;

class Builder {
  steps: Step[] = [];
  constructor(readonly rng: Rng) {}
  work(minMs: number, maxMs: number, ...events: EventSpec[]): this {
    this.steps.push({ waitMs: this.rng.int(minMs, maxMs), scaled: true, events });
    return this;
  }
  /** A real wait (retry delays are measured by the radar: never scaled). */
  wait(ms: number, ...events: EventSpec[]): this {
    this.steps.push({ waitMs: ms, scaled: false, events });
    return this;
  }
  progress(n: number, minMs = 1_500, maxMs = 5_000): this {
    for (let i = 0; i < n; i++) this.work(minMs, maxMs, { type: "progress", progressCount: this.rng.int(1, 40) });
    return this;
  }
  hang(...events: EventSpec[]): this {
    this.steps.push({ waitMs: 0, scaled: false, events, hang: true });
    return this;
  }
}

const start = (): EventSpec[] => [{ type: "thread.started" }, { type: "turn.started" }];
const completed: EventSpec = { type: "turn.completed" };

function rateLimitMessage(model: string, seconds: number): string {
  return `Rate limit reached for ${model} in organization org-demo on tokens per min (TPM): Limit 800000, Used 800000, Requested 12873. Please try again in ${seconds}s.`;
}

/** "5:59 PM" in UTC, the zone the radar reads usage-limit clock times in. */
export function clockTime(at: number): string {
  const d = new Date(at);
  const h = d.getUTCHours();
  return `${h % 12 === 0 ? 12 : h % 12}:${String(d.getUTCMinutes()).padStart(2, "0")} ${h < 12 ? "AM" : "PM"}`;
}

interface Ids {
  thread(time?: number): string;
  turn(): string;
}

function codexMeta(rng: Rng, ids: Ids, title: string): ThreadMeta {
  const viaProxy = rng.chance(0.2);
  if (viaProxy) {
    const proxy = rng.pick(PROXIES);
    return { threadId: ids.thread(), agent: "codex", provider: proxy.provider, model: rng.pick(proxy.models), title };
  }
  return { threadId: ids.thread(), agent: "codex", provider: "openai", model: rng.pick(CODEX_MODELS), title };
}

function claudeMeta(rng: Rng, ids: Ids, title: string): ThreadMeta {
  return { threadId: ids.thread(), agent: "claude-code", provider: "anthropic", model: rng.pick(CLAUDE_MODELS), title };
}

function plan(scenario: ScenarioName, meta: ThreadMeta, ids: Ids, b: Builder): ActorPlan {
  return { scenario, meta, turnId: ids.turn(), steps: b.steps };
}

/** One scenario → one or more actors (a storm is several threads at once). */
export function buildScenario(scenario: ScenarioName, rng: Rng, ids: Ids): ActorPlan[] {
  const title = rng.pick(TASKS);
  const b = new Builder(rng);
  switch (scenario) {
    case "steady": {
      const meta = rng.chance(0.5) ? codexMeta(rng, ids, title) : claudeMeta(rng, ids, title);
      b.work(200, 800, ...start()).progress(rng.int(3, 7)).work(1_000, 3_000, completed);
      return [plan(scenario, meta, ids, b)];
    }
    case "rate-limit-advised": {
      const meta = codexMeta(rng, ids, title);
      b.work(200, 800, ...start()).progress(rng.int(1, 3));
      const retries = rng.int(1, 3);
      for (let n = 1; n <= retries; n++) {
        const seconds = rng.pick([2, 3, 5, 8, 12, 20]);
        const withHeader = rng.chance(0.6);
        b.work(300, 1_000, {
          type: "retry",
          attempt: n,
          maxAttempts: 5,
          error: {
            httpStatus: 429,
            code: "rate_limit_exceeded",
            message: rateLimitMessage(meta.model, seconds),
            ...(withHeader ? { retryAfter: String(seconds) } : {}),
          },
        });
        b.wait(seconds * S + rng.int(20, 120), { type: "attempt", attempt: n, maxAttempts: 5 });
      }
      b.progress(rng.int(2, 4)).work(800, 2_000, completed);
      return [plan(scenario, meta, ids, b)];
    }
    case "rate-limit-early": {
      // Advised 2 s, retried after 0.23 s: the radar records "retried 1.77 s early".
      const meta = codexMeta(rng, ids, title);
      b.work(200, 800, ...start()).progress(1);
      for (let n = 1; n <= rng.int(2, 3); n++) {
        b.work(300, 900, {
          type: "retry",
          attempt: n,
          maxAttempts: 5,
          error: { httpStatus: 429, code: "rate_limit_exceeded", message: rateLimitMessage(meta.model, 2), retryAfter: "2" },
        });
        b.wait(rng.int(180, 400), { type: "attempt", attempt: n, maxAttempts: 5 });
      }
      b.wait(2_000).progress(2).work(500, 1_500, completed);
      return [plan(scenario, meta, ids, b)];
    }
    case "codex-reconnecting": {
      // Codex's own notice: "Reconnecting... n/5", the delay is not on the wire (estimated).
      const meta = { ...codexMeta(rng, ids, title), provider: "openai" };
      b.work(200, 800, ...start()).progress(rng.int(1, 3));
      const n = rng.int(1, 2);
      for (let i = 1; i <= n; i++) {
        b.work(200, 600, {
          type: "retry",
          attempt: i,
          maxAttempts: 5,
          error: {
            code: { responseStreamDisconnected: { httpStatusCode: 429 } },
            message: `Reconnecting... ${i}/5`,
            details: { additionalDetails: "exceeded retry limit, last status: 429 Too Many Requests" },
          },
        });
        b.wait(rng.int(2_000, 4_500), { type: "attempt", attempt: i, maxAttempts: 5 });
      }
      b.progress(rng.int(2, 4)).work(800, 2_000, completed);
      return [plan(scenario, meta, ids, b)];
    }
    case "capacity-storm": {
      // Several threads on one provider/model hit 503 server_is_overloaded at the same time.
      const model = rng.pick(CODEX_MODELS);
      const size = rng.int(3, 4);
      const plans: ActorPlan[] = [];
      for (let k = 0; k < size; k++) {
        const sb = new Builder(rng);
        const meta: ThreadMeta = { threadId: ids.thread(), agent: "codex", provider: "openai", model, title: rng.pick(TASKS) };
        sb.work(100, 600, ...start()).progress(1, 500, 1_500);
        const fails = rng.chance(0.45);
        const attempts = fails ? 3 : rng.int(1, 2);
        for (let n = 1; n <= attempts; n++) {
          sb.wait(n === 1 ? rng.int(200, 700) : 300, {
            type: "retry",
            attempt: n,
            maxAttempts: 3,
            error: { httpStatus: 503, code: "server_is_overloaded", message: "Selected model is at capacity. Please try a different model." },
          });
          // Codex retries capacity errors quickly and silently (0.2, 0.4, 0.8 s): far sooner than the policy's 30 s.
          sb.wait(200 * 2 ** (n - 1) + rng.int(0, 40), { type: "attempt", attempt: n, maxAttempts: 3 });
        }
        if (fails) {
          sb.wait(rng.int(200, 600), {
            type: "turn.failed",
            error: { httpStatus: 503, code: "serverOverloaded", message: "Selected model is at capacity. Please try a different model." },
          });
        } else {
          sb.progress(rng.int(2, 4)).work(800, 2_000, completed);
        }
        plans.push({ scenario, meta, turnId: ids.turn(), steps: sb.steps });
      }
      return plans;
    }
    case "claude-overloaded": {
      const meta = claudeMeta(rng, ids, title);
      b.work(200, 800, ...start()).progress(rng.int(1, 2));
      const n = rng.int(1, 3);
      for (let i = 1; i <= n; i++) {
        const delay = Math.round(500 * 2 ** (i - 1) * (1 + rng.next() * 0.25));
        b.work(300, 800, {
          type: "retry",
          attempt: i,
          maxAttempts: 10,
          delayMs: delay,
          error: { httpStatus: 529, code: "overloaded", message: "Overloaded" },
        });
        b.wait(delay, { type: "attempt", attempt: i, maxAttempts: 10 });
      }
      b.progress(rng.int(2, 4)).work(800, 2_000, completed);
      return [plan(scenario, meta, ids, b)];
    }
    case "usage-limit": {
      // Usage limit with a reset time only in the text; the thread waits for its reset.
      const meta = rng.chance(0.6) ? { ...codexMeta(rng, ids, title), provider: "openai" } : claudeMeta(rng, ids, title);
      const minutes = rng.int(6, 45);
      // The account's window fills up (Codex: its primary 5-hour window; Claude: five_hour), then refuses.
      const window = (usedPercent: number) => (now: number) => ({
        type: "limit.updated",
        account: DEMO_ACCOUNT,
        window: meta.agent === "codex" ? "primary" : "five_hour",
        windowMinutes: 300,
        usedPercent,
        resetsAt: now + minutes * 60_000,
      });
      // Derived from draws already made, so the rest of the fleet's schedule stays as it was.
      b.work(200, 800, ...start(), window(90 + (minutes % 8))).progress(rng.int(1, 3));
      b.work(300, 1_000, window(100), (now) => ({
        type: "turn.failed",
        error: {
          httpStatus: 429,
          code: meta.agent === "codex" ? "usageLimitExceeded" : "usage_limit_reached",
          message: `You've hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/codex/settings/usage to purchase more credits or try again at ${clockTime(now + minutes * 60_000)}.`,
        },
      }));
      b.hang();
      return [plan(scenario, meta, ids, b)];
    }
    case "stall": {
      // A retry notice, then silence: only the radar's deadline ends it (exhausted + interrupt).
      const meta = { ...codexMeta(rng, ids, title), provider: "openai" };
      b.work(200, 800, ...start()).progress(rng.int(1, 2));
      b.work(300, 900, {
        type: "retry",
        attempt: 1,
        maxAttempts: 5,
        error: {
          code: { responseStreamDisconnected: { httpStatusCode: 429 } },
          message: "Reconnecting... 1/5",
          details: { additionalDetails: "exceeded retry limit, last status: 429 Too Many Requests" },
        },
      });
      b.hang();
      return [plan(scenario, meta, ids, b)];
    }
    case "long-wait": {
      // A long advised wait with a countdown (Stop retrying is the interesting button here).
      const meta = rng.chance(0.5) ? codexMeta(rng, ids, title) : claudeMeta(rng, ids, title);
      const seconds = rng.pick([90, 120, 180, 240]);
      b.work(200, 800, ...start()).progress(1);
      b.work(300, 900, {
        type: "retry",
        attempt: 1,
        maxAttempts: meta.agent === "claude-code" ? 10 : 5,
        ...(meta.agent === "claude-code" ? { delayMs: seconds * S } : {}),
        error: {
          httpStatus: 429,
          code: meta.agent === "claude-code" ? "rate_limit" : "rate_limit_exceeded",
          message: rateLimitMessage(meta.model, seconds),
          retryAfter: String(seconds),
        },
      });
      b.wait(seconds * S, { type: "attempt", attempt: 1 }).progress(2).work(500, 1_500, completed);
      return [plan(scenario, meta, ids, b)];
    }
    case "exhausted-attempts": {
      const meta = codexMeta(rng, ids, title);
      b.work(200, 800, ...start()).progress(1);
      for (let n = 1; n <= 5; n++) {
        b.work(100, 300, {
          type: "retry",
          attempt: n,
          maxAttempts: 5,
          error: { httpStatus: 429, code: "rate_limit_exceeded", message: rateLimitMessage(meta.model, 1), retryAfter: "1" },
        });
        b.wait(1_000 + rng.int(10, 60), { type: "attempt", attempt: n, maxAttempts: 5 });
      }
      b.wait(rng.int(200, 500), {
        type: "turn.failed",
        error: { code: { responseTooManyFailedAttempts: { httpStatusCode: 429 } }, message: "exceeded retry limit, last status: 429 Too Many Requests" },
      });
      return [plan(scenario, meta, ids, b)];
    }
    case "subagents": {
      const parent = claudeMeta(rng, ids, title);
      const children: ActorPlan[] = [];
      for (let k = 0; k < rng.int(2, 3); k++) {
        const cb = new Builder(rng);
        const meta: ThreadMeta = { ...claudeMeta(rng, ids, `${rng.pick(SUBTASKS)} (${title.toLowerCase()})`), parentThreadId: parent.threadId, model: "claude-haiku-4-5" };
        cb.work(100, 500, ...start()).progress(1, 800, 2_000);
        if (rng.chance(0.6)) {
          const delay = rng.pick([2_000, 4_000, 8_000]);
          cb.work(200, 600, {
            type: "retry",
            attempt: 1,
            maxAttempts: 10,
            delayMs: delay,
            error: { httpStatus: 429, code: "rate_limit", message: "This request would exceed your organization's rate limit." },
          });
          cb.wait(delay, { type: "attempt", attempt: 1, maxAttempts: 10 });
        }
        cb.progress(rng.int(2, 4)).work(500, 1_500, completed);
        children.push({ scenario, meta, turnId: ids.turn(), steps: cb.steps });
      }
      b.work(200, 800, ...start()).progress(1);
      b.steps.push({ waitMs: 500, scaled: true, spawn: children });
      b.progress(rng.int(5, 8), 2_000, 5_000).work(1_000, 2_000, completed);
      return [plan(scenario, parent, ids, b)];
    }
    case "recipe-runner": {
      const proxy = rng.pick(PROXIES);
      const meta: ThreadMeta = {
        threadId: ids.thread(),
        agent: "recipe-runner",
        provider: proxy.provider,
        model: rng.pick(proxy.models),
        title: `recipe: ${title.toLowerCase()}`,
        policy: "recipe-runner",
      };
      b.work(200, 800, ...start()).progress(1);
      const n = rng.int(1, 2);
      for (let i = 1; i <= n; i++) {
        const seconds = rng.pick([4, 6, 10]);
        b.work(300, 900, {
          type: "retry",
          attempt: i,
          maxAttempts: 5,
          error: { httpStatus: 429, code: "rate_limit_exceeded", message: `upstream 429 from ${proxy.provider}: try again in ${seconds}s`, retryAfter: String(seconds) },
        });
        b.wait(seconds * S, { type: "attempt", attempt: i, maxAttempts: 5 });
      }
      b.progress(rng.int(2, 3)).work(500, 1_500, completed);
      return [plan(scenario, meta, ids, b)];
    }
    case "native-codex": {
      // A native Codex app-server source: the wire messages as Codex writes them.
      const meta: ThreadMeta = { threadId: ids.thread(), agent: "codex", provider: "openai", model: rng.pick(CODEX_MODELS), title };
      const item = `msg_demo_${Math.floor(rng.next() * 1e12).toString(16)}`;
      const wait = rng.pick([2, 3]);
      b.steps.push({
        waitMs: rng.int(200, 800),
        scaled: true,
        native: ({ threadId, turnId, now, model }) => [
          { method: "thread/started", params: { thread: { id: threadId, modelProvider: "openai", model, cwd: "/srv/agent/work", preview: title, name: title } } },
          { method: "thread/status/changed", params: { threadId, status: { type: "active", activeFlags: [] } }, emittedAtMs: now },
          { method: "turn/started", params: { threadId, turn: { id: turnId, items: [], status: "inProgress", error: null } }, emittedAtMs: now },
        ],
      });
      b.steps.push({
        waitMs: rng.int(500, 1_500),
        scaled: true,
        native: ({ threadId, turnId }) => [
          {
            method: "error",
            params: {
              error: {
                message: "Reconnecting... 1/5",
                codexErrorInfo: { responseStreamDisconnected: { httpStatusCode: 429 } },
                additionalDetails: "exceeded retry limit, last status: 429 Too Many Requests, request id: req_demo",
              },
              willRetry: true,
              threadId,
              turnId,
            },
          },
        ],
      });
      b.steps.push({
        waitMs: wait * S + 40,
        scaled: false,
        native: ({ threadId, turnId }) => [
          { method: "item/started", params: { item: { type: "agentMessage", id: item, text: "" }, threadId, turnId } },
          { method: "item/agentMessage/delta", params: { threadId, turnId, itemId: item, delta: "Done: " } },
          { method: "item/completed", params: { item: { type: "agentMessage", id: item, text: "Done: fixed." }, threadId, turnId } },
        ],
      });
      // Derived from the item id already drawn, so the rest of the fleet's schedule stays as it was.
      const seed = Number.parseInt(item.slice(-6), 16) || 0;
      const used = 5 + (seed % 80);
      const primaryResetS = 600 + (seed % 17_400);
      const secondaryResetS = 86_400 + (seed % 518_400);
      b.steps.push({
        waitMs: rng.int(500, 1_500),
        scaled: true,
        native: ({ threadId, turnId, now }) => [
          // What Codex reports after a successful response: the account's two windows.
          {
            method: "account/rateLimits/updated",
            params: {
              rateLimits: {
                limitId: "codex",
                primary: { usedPercent: used, windowDurationMins: 300, resetsAt: Math.round(now / 1000) + primaryResetS },
                secondary: { usedPercent: Math.round(used / 4), windowDurationMins: 10_080, resetsAt: Math.round(now / 1000) + secondaryResetS },
                rateLimitReachedType: null,
              },
            },
            emittedAtMs: now,
          },
          { method: "thread/status/changed", params: { threadId, status: { type: "idle" } } },
          { method: "turn/completed", params: { threadId, turn: { id: turnId, items: [], status: "completed", error: null } } },
        ],
      });
      return [plan(scenario, meta, ids, b)];
    }
  }
}

/**
 * The fleet: an endless, deterministic schedule. The first actors cover every kind of trouble
 * within a few seconds; then a new scenario every few (virtual) seconds.
 */
export function* fleetSchedule(seed: number, runTag = ""): Generator<ScheduledActor> {
  const rng = createRng(hashSeed(`demo:${seed}`));
  const idRng = createRng(hashSeed(`ids:${seed}:${runTag}`));
  let clock = 0x01a22800000 + (hashSeed(`clock:${seed}:${runTag}`) % 0x100000);
  const ids: Ids = {
    thread: () => idRng.uuid((clock += 977)),
    turn: () => idRng.uuid((clock += 131)),
  };
  let t = 0;
  for (let i = 0; ; i++) {
    const scenario = i < OPENING.length ? OPENING[i] : rng.weighted(WEIGHTS);
    for (const plan of buildScenario(scenario, rng, ids)) yield { startMs: t, plan };
    t += i < OPENING.length ? rng.int(150, 450) : rng.int(3_000, 8_000);
  }
}
