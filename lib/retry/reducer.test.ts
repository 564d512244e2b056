import { describe, expect, it } from "vitest";
import { initialThreadState, reduce, tick, viewStatus } from "./reducer";
import { MIN, SEC, T0, eventsOn, feed, feedStep, withEffects } from "./testing";
import type { ErrorReport, RadarEvent, ThreadState, ThreadStatus } from "./types";

const RATE_429: ErrorReport = { httpStatus: 429, code: "responseStreamDisconnected", message: "Reconnecting... 1/5" };
const OVERLOADED: ErrorReport = { code: "serverOverloaded", message: "Selected model is at capacity. Please try a different model." };

/** A running turn "u1" on thread-1, then the given events. */
function running(more: (e: ReturnType<typeof eventsOn>) => RadarEvent[], options: { threadId?: string; settings?: RadarEvent["settings"]; parent?: string } = {}) {
  const e = eventsOn(options.threadId);
  const start: RadarEvent[] = [e("thread.started", 0, { parentThreadId: options.parent ?? null })];
  if (options.settings) start.push(e("settings.changed", 0, { settings: options.settings }));
  start.push(e("turn.started", 0, { turnId: "u1" }));
  return [...start, ...more(e)];
}

const retry429 = (e: ReturnType<typeof eventsOn>, at: number, attempt: number, extra: Partial<RadarEvent> = {}) =>
  e("retry", at, { turnId: "u1", attempt, maxAttempts: 5, willRetry: true, error: { ...RATE_429, message: `Reconnecting... ${attempt}/5` }, ...extra });

describe("a thread's status follows its events", () => {
  it.each<[string, (e: ReturnType<typeof eventsOn>) => RadarEvent[], ThreadStatus]>([
    ["thread.started makes a thread idle", (e) => [e("thread.started", 0)], "idle"],
    ["turn.started makes it running", (e) => [e("thread.started", 0), e("turn.started", 1, { turnId: "u1" })], "running"],
    ["a retry notice makes it retrying", (e) => [e("turn.started", 0, { turnId: "u1" }), retry429(e, SEC, 1)], "retrying"],
    [
      "progress after a notice ends the episode as recovered while the turn runs on",
      (e) => [e("turn.started", 0, { turnId: "u1" }), retry429(e, SEC, 1), e("progress", 3 * SEC, { turnId: "u1" })],
      "recovered",
    ],
    [
      "turn.completed makes it completed",
      (e) => [e("turn.started", 0, { turnId: "u1" }), e("progress", SEC, { turnId: "u1" }), e("turn.completed", 2 * SEC, { turnId: "u1" })],
      "completed",
    ],
    [
      "a new turn.started resets a failed thread to running",
      (e) => [e("turn.started", 0, { turnId: "u1" }), e("turn.failed", SEC, { turnId: "u1", error: { httpStatus: 500 } }), e("turn.started", 2 * SEC, { turnId: "u2" })],
      "running",
    ],
    ["progress on a fresh thread adopts its turn (sources without turn.started)", (e) => [e("progress", 0, { turnId: "u9" })], "running"],
  ])("%s", (_name, events, status) => {
    expect(feed(events(eventsOn()), undefined).status).toBe(status);
  });

  it("recovery is recorded on the episode and the retry field clears", () => {
    const s = feed(running((e) => [retry429(e, SEC, 1), e("progress", 3 * SEC, { turnId: "u1", progressCount: 4, lastAt: T0 + 3.5 * SEC })]));
    expect(s.episode).toMatchObject({ seq: 1, outcome: "recovered", endedAt: T0 + 3 * SEC });
    expect(s.retry).toBeNull();
    expect(s).toMatchObject({ progressCount: 4, lastProgressAt: T0 + 3.5 * SEC });
  });
  it("turn.completed after recovery keeps the episode's outcome recovered", () => {
    const s = feed(running((e) => [retry429(e, SEC, 1), e("progress", 3 * SEC, { turnId: "u1" }), e("turn.completed", 4 * SEC, { turnId: "u1" })]));
    expect(s).toMatchObject({ status: "completed", episode: { outcome: "recovered" } });
  });
  it("turn.completed while a retry is pending ends the episode completed", () => {
    expect(feed(running((e) => [retry429(e, SEC, 1), e("turn.completed", 4 * SEC, { turnId: "u1" })])).episode?.outcome).toBe("completed");
  });
  it("a new turn while an episode is open supersedes the episode", () => {
    const s = feed(running((e) => [retry429(e, SEC, 1), e("turn.started", 4 * SEC, { turnId: "u2" })]));
    expect(s).toMatchObject({ status: "running", turnId: "u2", retry: null, episode: { outcome: "superseded" } });
  });
  it("metadata from events is kept on the thread", () => {
    const e = eventsOn();
    const s = feed([e("thread.started", 0, { agent: "codex", provider: "openai", model: "gpt-5.5", title: "fix tests", parentThreadId: "root" })]);
    expect(s).toMatchObject({ agent: "codex", provider: "openai", model: "gpt-5.5", title: "fix tests", parentThreadId: "root" });
  });
  it("an unknown event kind is kept and changes nothing", () => {
    const before = feed(running(() => []));
    const e = eventsOn();
    const after = withEffects(reduce(before, { ...e("unknown", 5 * SEC), seq: 99 }, T0 + 5 * SEC));
    expect(after).toMatchObject({ status: "running", applied: { note: "unknown event kind: kept, changes nothing" } });
  });
});

describe("retry notices: attempt n of m, expected next attempt, deadline", () => {
  it.each<[number, number, number]>([
    [1, 5, 65],
    [2, 10, 70],
    [3, 20, 80],
    [4, 40, 100],
    [5, 80, 140],
  ])("under codex-429-stall-bound notice %i without advice expects the retry ~%i s later and sets the deadline %i s later", (n, expected, deadline) => {
    const at = 100 * SEC;
    const s = feed(running((e) => [retry429(e, at, n)]));
    expect(s.retry).toEqual({
      kind: "rate_limit",
      attempt: n,
      maxAttempts: 5,
      nextAttemptAt: T0 + at + expected * SEC,
      nextAttemptEstimated: true,
      deadlineAt: T0 + at + deadline * SEC,
      resetAt: null,
      advisedDelayMs: null,
      policy: "codex-429-stall-bound",
    });
    expect(s.wakeAt).toBe(T0 + at + deadline * SEC);
  });

  it("a newer notice re-arms the deadline", () => {
    const s = feed(running((e) => [retry429(e, 0, 1), retry429(e, 60 * SEC, 2)]), 100 * SEC);
    expect(s).toMatchObject({ status: "retrying", retry: { attempt: 2, deadlineAt: T0 + 130 * SEC } });
    expect(s.episode?.attempts.map((a) => a.n)).toEqual([1, 2]);
  });
  it("'Reconnecting... n/m' in the message gives the attempt and the source's maximum", () => {
    const s = feed(running((e) => [e("retry", 0, { turnId: "u1", error: { ...RATE_429, message: "Reconnecting... 3/5" } })]));
    expect(s.retry).toMatchObject({ attempt: 3, maxAttempts: 5 });
  });
  it("a notice that gives no attempt number counts on from the last", () => {
    const s = feed(running((e) => [e("retry", 0, { turnId: "u1", error: { httpStatus: 429 } }), e("retry", SEC, { turnId: "u1", error: { httpStatus: 429 } })]));
    expect(s.retry?.attempt).toBe(2);
  });
  it("a Retry-After is the expected delay: retry expected 2 s after the notice, deadline 62 s", () => {
    const s = feed(running((e) => [retry429(e, 0, 1, { error: { ...RATE_429, retryAfter: "2" } })]));
    expect(s.retry).toMatchObject({ nextAttemptAt: T0 + 2 * SEC, nextAttemptEstimated: true, deadlineAt: T0 + 62 * SEC, advisedDelayMs: 2 * SEC });
    expect(s.episode?.attempts[0].hints).toEqual([{ source: "retry-after", delayMs: 2 * SEC }]);
  });
  it("a source's own announced delay (Claude retry_delay_ms) is exact, not an estimate", () => {
    const s = feed(running((e) => [e("retry", 0, { turnId: "u1", attempt: 1, maxAttempts: 10, delayMs: 2000, error: { httpStatus: 429, code: "rate_limit" } })]));
    expect(s.retry).toMatchObject({ nextAttemptAt: T0 + 2000, nextAttemptEstimated: false, deadlineAt: T0 + 62 * SEC, maxAttempts: 10 });
  });
  it("a retry with neither policy nor advice (kind other) shows retrying without any deadline", () => {
    const s = feed(running((e) => [e("retry", 0, { turnId: "u1", error: { code: "sandboxError" } })]), 10 * MIN);
    expect(s).toMatchObject({ status: "retrying", wakeAt: null, retry: { kind: "other", policy: null, nextAttemptAt: null, deadlineAt: null } });
  });
  it.each<[string, ErrorReport]>([
    ["an auth failure", { httpStatus: 401, message: "Unauthorized" }],
    ["an invalid request", { code: "contextWindowExceeded" }],
  ])("%s is never shown as retrying, even when the source retries", (_name, error) => {
    const s = feed(running((e) => [e("retry", 0, { turnId: "u1", error, willRetry: true })]));
    expect(s.status).toBe("running");
    expect(s.episode).toBeNull();
    expect(s.lastError).toMatchObject({ kind: error.httpStatus === 401 ? "auth" : "invalid_request" });
  });
  it("a notice of a new kind starts a new episode; the old one is superseded", () => {
    const s = withEffects(feedStep(running((e) => [retry429(e, 0, 1), e("retry", SEC, { turnId: "u1", error: OVERLOADED, attempt: 1, maxAttempts: 3 })])));
    expect(s).toMatchObject({ episodeCount: 2, episode: { seq: 2, kind: "capacity", policy: "codex-capacity" }, retry: { attempt: 1, maxAttempts: 3 } });
    // The replaced episode's final form comes out of the same step, so the server can store it.
    expect(s.endedEpisode).toMatchObject({ seq: 1, kind: "rate_limit", outcome: "superseded", endedAt: T0 + SEC });
  });
  it("a retry count that starts over starts a new episode", () => {
    const s = feed(running((e) => [retry429(e, 0, 1), retry429(e, SEC, 2), retry429(e, 2 * SEC, 1)]));
    expect(s.episode).toMatchObject({ seq: 2, attempts: [expect.objectContaining({ n: 1 })] });
  });
});

describe("the bound: a missed deadline or an attempt past the bound ends the episode exhausted", () => {
  it("a missed deadline under codex-429-stall-bound ends it exhausted at notice + 65 s with rateLimitRetryExhausted and a cascading interrupt", () => {
    const s = withEffects(feedStep(running((e) => [retry429(e, 10 * SEC, 1)]), 75 * SEC));
    expect(s).toMatchObject({ status: "exhausted", retry: null, lastError: { code: "rateLimitRetryExhausted" } });
    expect(s.episode).toMatchObject({ outcome: "exhausted", outcomeCode: "rateLimitRetryExhausted", endedAt: T0 + 75 * SEC });
    expect(s.directives).toEqual([
      {
        key: "thread-1:u1:ep1:interrupt",
        kind: "interrupt",
        turnId: "u1",
        reason: "no progress or new notice by the deadline (65 s after the notice): the retry stalled",
        origin: "policy",
        cascade: true,
        at: T0 + 75 * SEC,
        dueAt: T0 + 75 * SEC,
      },
    ]);
  });
  it.each<[string, ErrorReport, string, string, number]>([
    ["capacity under codex-capacity", OVERLOADED, "capacityRetryExhausted", "codex-capacity", 120 * SEC],
    ["transport under codex-native", { httpStatus: 502 }, "retryExhausted", "codex-native", 60 * SEC + 220],
    ["a rate limit", { httpStatus: 429 }, "rateLimitRetryExhausted", "codex-429-stall-bound", 65 * SEC],
  ])("%s ends exhausted with its own code at the deadline", (_name, error, code, policy, deadline) => {
    const events = running((e) => [e("retry", 0, { turnId: "u1", attempt: 1, error })]);
    expect(feed(events, deadline - 1).status).toBe("retrying");
    expect(feed(events, deadline).episode).toMatchObject({ outcome: "exhausted", outcomeCode: code, policy });
  });
  it("a Retry-After above 300 s under codex-429-stall-bound ends the episode at once as exhausted with the reset time", () => {
    const s = withEffects(feedStep(running((e) => [retry429(e, 10 * SEC, 1, { error: { ...RATE_429, retryAfter: "3600" } })])));
    expect(s).toMatchObject({ status: "exhausted", episode: { outcome: "exhausted", outcomeCode: "rateLimitRetryExhausted", resetAt: T0 + 3610 * SEC, endedAt: T0 + 10 * SEC } });
    expect(s.episode?.outcomeReason).toBe("advised wait of 60 min is above the 5 min cap of codex-429-stall-bound");
    expect(s.directives.map((d) => d.kind)).toEqual(["interrupt"]);
  });
  it("a Retry-After of exactly 300 s is still waited for", () => {
    expect(feed(running((e) => [retry429(e, 0, 1, { error: { ...RATE_429, retryAfter: "300" } })])).status).toBe("retrying");
  });
  it("a 6th attempt under codex-429-stall-bound ends the episode at once as exhausted", () => {
    const s = withEffects(feedStep(running((e) => [1, 2, 3, 4, 5, 6].map((n) => retry429(e, n * SEC, n)))));
    expect(s).toMatchObject({ status: "exhausted", episode: { outcome: "exhausted", outcomeReason: "attempt 6 is past the bound of 5" } });
    expect(s.directives[0]).toMatchObject({ kind: "interrupt", cascade: true, at: T0 + 6 * SEC });
  });
  it("a named policy is enforced even below the source's own maximum (recipe-runner's 5 against Claude's 10)", () => {
    const s = feed(
      running(
        (e) => [1, 2, 3, 4, 5, 6].map((n) => e("retry", n * SEC, { turnId: "u1", attempt: n, maxAttempts: 10, delayMs: 500, error: { httpStatus: 429 } })),
        { settings: { policy: "recipe-runner" } },
      ),
    );
    expect(s).toMatchObject({ status: "exhausted", episode: { policy: "recipe-runner", maxAttempts: 10, bound: 5 } });
  });
  it("the kind's default policy defers to the source's own maximum: Claude's retry 9 of 10 is not cut off at codex-capacity's 3", () => {
    const s = feed(running((e) => [e("retry", 0, { turnId: "u1", attempt: 9, maxAttempts: 10, delayMs: 30 * SEC, error: { httpStatus: 529, code: "overloaded" } })]));
    expect(s).toMatchObject({ status: "retrying", retry: { attempt: 9, maxAttempts: 10, policy: "codex-capacity" }, episode: { bound: 10 } });
  });
  it("a policy named for another kind does not govern: the kind's default applies", () => {
    const s = feed(running((e) => [e("retry", 0, { turnId: "u1", error: OVERLOADED })], { settings: { policy: "recipe-runner" } }));
    expect(s.retry?.policy).toBe("codex-capacity");
  });
  it("a policy the event names governs when the thread names none", () => {
    const s = feed(running((e) => [e("retry", 0, { turnId: "u1", error: { httpStatus: 429 }, policy: "recipe-runner" })]));
    expect(s.retry).toMatchObject({ policy: "recipe-runner", nextAttemptAt: T0 + 60 * SEC, deadlineAt: T0 + 120 * SEC });
  });
  it("an unknown policy name falls back to the default and says so", () => {
    const s = withEffects(feedStep(running((e) => [e("retry", 0, { turnId: "u1", error: { httpStatus: 429 }, policy: "nope" })])));
    expect(s.retry?.policy).toBe("codex-429-stall-bound");
    expect(s.applied?.note).toContain("policy nope is unknown or invalid: using the default");
  });
  it("a custom policy with unlimited attempts never ends on a count", () => {
    const unlimited = { name: "patient", kinds: ["rate_limit" as const], maxAttempts: null, baseDelayMs: SEC, factor: 2, maxDelayMs: MIN, jitterMin: 0, jitterMax: 0, adviceCapMs: null, graceMs: 60 * SEC };
    const s = feed(running((e) => [e("retry", 0, { turnId: "u1", attempt: 500, error: { httpStatus: 429 } })], { settings: { policy: unlimited } }));
    expect(s).toMatchObject({ status: "retrying", retry: { attempt: 500, maxAttempts: null, nextAttemptAt: T0 + MIN }, episode: { bound: null } });
  });
});

describe("stalled is a derived view between a missed deadline and the watchdog's tick", () => {
  const events = running((e) => [retry429(e, 0, 1)]);
  it.each<[string, number, ThreadStatus]>([
    ["before the deadline it is retrying", 64 * SEC, "retrying"],
    ["at the deadline, not yet ticked, it shows stalled", 65 * SEC, "stalled"],
    ["long after the deadline, not yet ticked, it shows stalled", 10 * MIN, "stalled"],
  ])("%s", (_name, at, status) => {
    expect(viewStatus(feed(events), T0 + at)).toBe(status);
  });
  it("the tick then ends it exhausted", () => {
    expect(viewStatus(tick(feed(events), T0 + 65 * SEC).state, T0 + 65 * SEC)).toBe("exhausted");
  });
});

describe("terminal failures", () => {
  it("a retry notice with willRetry false is terminal: failed with its kind", () => {
    const s = feed(running((e) => [e("retry", 0, { turnId: "u1", willRetry: false, error: OVERLOADED })]));
    expect(s).toMatchObject({ status: "failed", retry: null, lastError: { kind: "capacity", code: "serverOverloaded" }, episode: { outcome: "failed", outcomeCode: "serverOverloaded" } });
  });
  it("the terminal notice and the turn.failed that follows are one failure and one episode", () => {
    const s = withEffects(feedStep(
      running((e) => [
        retry429(e, 0, 1),
        e("retry", SEC, { turnId: "u1", willRetry: false, error: { code: "responseTooManyFailedAttempts", httpStatus: 429 } }),
        e("turn.failed", SEC + 10, { turnId: "u1", error: { code: "responseTooManyFailedAttempts", httpStatus: 429 } }),
      ]),
    ));
    expect(s).toMatchObject({ status: "failed", turnOpen: false, episodeCount: 1, episode: { outcome: "failed", outcomeCode: "responseTooManyFailedAttempts" } });
    expect(s.applied?.late).toBe(false);
  });
  it("turn.failed without any notice is failed with its kind and opens no episode", () => {
    const s = feed(running((e) => [e("turn.failed", 0, { turnId: "u1", error: { httpStatus: 401 } })]));
    expect(s).toMatchObject({ status: "failed", episode: null, lastError: { kind: "auth", httpStatus: 401 } });
  });
  it("a terminal failure the source gave up on is failed, not exhausted (exhausted means our bound ended it)", () => {
    const s = withEffects(feedStep(running((e) => [retry429(e, 0, 5), e("retry", SEC, { turnId: "u1", willRetry: false, error: { message: "exceeded retry limit, last status: 429 Too Many Requests" } })])));
    expect(s).toMatchObject({ status: "failed", lastError: { kind: "rate_limit" }, directives: [] });
  });
});

describe("usage limits and rate windows with a reset time wait for the reset", () => {
  const usage = (at: number) => ({ code: "usageLimitExceeded", message: `You've hit your usage limit. Upgrade or try again at ${at}` });
  it("a usage-limit failure with a known reset is waiting_reset until the reset passes, then failed because the turn had ended", () => {
    const events = running((e) => [
      e("retry", 0, { turnId: "u1", willRetry: false, error: { ...usage(0), message: "You've hit your usage limit. Try again at 5:59 PM." } }),
      e("turn.failed", 10, { turnId: "u1", error: { ...usage(0), message: "You've hit your usage limit. Try again at 5:59 PM." } }),
    ]);
    const waiting = feed(events, 58 * MIN);
    expect(waiting).toMatchObject({ status: "waiting_reset", retry: { kind: "usage_limit", resetAt: T0 + 59 * MIN, nextAttemptAt: null, deadlineAt: null }, wakeAt: T0 + 59 * MIN });
    expect(feed(events, 59 * MIN)).toMatchObject({ status: "failed", retry: null, wakeAt: null });
  });
  it("a usage limit without a reset time is failed at once", () => {
    expect(feed(running((e) => [e("turn.failed", 0, { turnId: "u1", error: { code: "usageLimitExceeded", message: "You've hit your usage limit." } })])).status).toBe("failed");
  });
  it("a usage limit the source will wait out itself is waiting_reset, then retrying at the reset, then exhausted 60 s later without progress", () => {
    const events = running((e) => [e("retry", 0, { turnId: "u1", willRetry: true, error: { httpStatus: 429, code: "usage_limit_reached", details: { resetsAt: T0 / 1000 + 600 } } })]);
    expect(feed(events, 5 * MIN)).toMatchObject({ status: "waiting_reset", retry: { resetAt: T0 + 10 * MIN, deadlineAt: T0 + 11 * MIN, policy: null } });
    expect(feed(events, 10 * MIN).status).toBe("retrying");
    expect(feed(events, 11 * MIN)).toMatchObject({ status: "exhausted", episode: { outcomeCode: "rateLimitRetryExhausted", resetAt: T0 + 10 * MIN } });
  });
  it("a rate limit whose longest advice is a window reset (Codex resetsAt) is waiting_reset", () => {
    const s = feed(running((e) => [e("retry", 0, { turnId: "u1", error: { httpStatus: 429, details: { resetsAt: T0 / 1000 + 200 } } })]));
    expect(s).toMatchObject({ status: "waiting_reset", retry: { resetAt: T0 + 200 * SEC } });
  });
  it("a rate limit with only a short Retry-After is plain retrying", () => {
    expect(feed(running((e) => [retry429(e, 0, 1, { error: { ...RATE_429, retryAfter: "2" } })])).status).toBe("retrying");
  });
});

describe("late frames after an episode ended change nothing and are marked late", () => {
  const exhausted = () => running((e) => [retry429(e, 0, 1), e("turn.interrupted", 66 * SEC, { turnId: "u1" })]);
  it.each<[string, RadarEvent["type"], Partial<RadarEvent>]>([
    ["a late turn.completed", "turn.completed", {}],
    ["a late turn.failed", "turn.failed", { error: { httpStatus: 500 } }],
    ["a late retry notice", "retry", { error: RATE_429, attempt: 2 }],
    ["late progress", "progress", {}],
    ["a late attempt", "attempt", { attempt: 1 }],
  ])("%s for an exhausted turn keeps exhausted", (_name, type, fields) => {
    const before = feed(exhausted(), 70 * SEC);
    const after = withEffects(reduce(before, { seq: 100, type, at: T0 + 80 * SEC, threadId: "thread-1", turnId: "u1", ...fields }, T0 + 80 * SEC));
    expect(after).toMatchObject({ status: "exhausted", episode: before.episode, applied: { late: true }, directives: [] });
  });
  it("a turn.completed while the policy's interrupt is pending is late, and confirms the interrupt", () => {
    const s = withEffects(feedStep(running((e) => [retry429(e, 0, 1), e("turn.completed", 70 * SEC, { turnId: "u1" })])));
    expect(s).toMatchObject({ status: "exhausted", applied: { late: true }, interrupt: { result: "acknowledged" }, wakeAt: null });
  });
  it("frames for a previous turn are late", () => {
    const s = withEffects(feedStep(running((e) => [e("turn.completed", SEC, { turnId: "u1" }), e("turn.started", 2 * SEC, { turnId: "u2" }), e("retry", 3 * SEC, { turnId: "u1", error: RATE_429 })])));
    expect(s).toMatchObject({ status: "running", turnId: "u2", episode: null, applied: { late: true } });
  });
  it("a turn.started for a turn that already ended is late", () => {
    const s = withEffects(feedStep(running((e) => [e("turn.completed", SEC, { turnId: "u1" }), e("turn.started", 2 * SEC, { turnId: "u1" })])));
    expect(s).toMatchObject({ status: "completed", applied: { late: true } });
  });
  it("a late frame after an operator stop is late too", () => {
    const s = withEffects(feedStep(running((e) => [retry429(e, 0, 1), e("stop.requested", SEC, { actor: "ops" }), e("progress", 2 * SEC, { turnId: "u1" })])));
    expect(s).toMatchObject({ status: "stopping", applied: { late: true } });
  });
});

describe("Stop retrying: stopping, then stopped on acknowledgement, or broken after the grace", () => {
  const stopped = (ack: (e: ReturnType<typeof eventsOn>) => RadarEvent[], options = {}) =>
    running((e) => [retry429(e, 0, 1), e("stop.requested", SEC, { actor: "alice", reason: "runaway" }), ...ack(e)], options);

  it("stop.requested on a retrying thread makes it stopping and sends a cascading operator interrupt", () => {
    const s = withEffects(feedStep(stopped(() => [])));
    expect(s).toMatchObject({ status: "stopping", retry: null, episode: { outcome: "stopped", outcomeCode: "stoppedByOperator", outcomeReason: "runaway" } });
    expect(s.directives).toEqual([{ key: "thread-1:u1:stop4", kind: "interrupt", turnId: "u1", reason: "runaway", origin: "operator", cascade: true, at: T0 + SEC, dueAt: T0 + SEC }]);
    expect(s.interrupt).toMatchObject({ actor: "alice", result: "pending", graceEndsAt: T0 + 61 * SEC });
  });
  it.each<[string, (e: ReturnType<typeof eventsOn>) => RadarEvent]>([
    ["directive.acked acknowledged", (e) => e("directive.acked", 2 * SEC, { turnId: "u1", directiveId: "db-uuid-1", ackResult: "acknowledged" })],
    ["directive.acked naming the directive key", (e) => e("directive.acked", 2 * SEC, { directiveId: "thread-1:u1:stop4", ackResult: "acknowledged" })],
    ["interrupt.ack", (e) => e("interrupt.ack", 2 * SEC, { turnId: "u1" })],
    ["turn.interrupted for that turn", (e) => e("turn.interrupted", 2 * SEC, { turnId: "u1" })],
  ])("%s makes it stopped", (_name, ack) => {
    const s = feed(stopped((e) => [ack(e)]), 5 * MIN);
    expect(s).toMatchObject({ status: "stopped", interrupt: { result: "acknowledged" }, wakeAt: null });
  });
  it("a failed directive.acked keeps it stopping until the grace ends, then broken", () => {
    const events = stopped((e) => [e("directive.acked", 2 * SEC, { turnId: "u1", ackResult: "failed" })]);
    expect(feedStep(events).effects.applied?.note).toBe("the source could not apply the interrupt: still stopping until the grace ends");
    expect(feed(events, 60 * SEC).status).toBe("stopping");
    expect(feed(events, 61 * SEC).status).toBe("broken");
  });
  it("60 s without acknowledgement makes it broken", () => {
    const events = stopped(() => []);
    expect(feed(events, 61 * SEC - 1).status).toBe("stopping");
    expect(feed(events, 61 * SEC)).toMatchObject({ status: "broken", interrupt: { result: "unconfirmed" }, wakeAt: null });
  });
  it("a subagent left unacknowledged becomes failed with code abandoned, not idle", () => {
    const s = feed(stopped(() => [], { parent: "root-thread" }), 61 * SEC);
    expect(s).toMatchObject({ status: "failed", lastError: { code: "abandoned" } });
  });
  it("the grace comes from settings.stopGraceMs when set", () => {
    expect(feed(stopped(() => [], { settings: { stopGraceMs: 5 * SEC } }), 6 * SEC).status).toBe("broken");
  });
  it.each<[string, string | undefined]>([
    ["a broken thread", undefined],
    ["an abandoned subagent", "root-thread"],
  ])("a later acknowledged stop returns %s to idle", (_name, parent) => {
    const s = feed(
      stopped((e) => [e("stop.requested", 2 * MIN, { actor: "bob" }), e("directive.acked", 2 * MIN + SEC, { turnId: "u1", ackResult: "acknowledged" })], { parent }),
      5 * MIN,
    );
    expect(s.status).toBe("idle");
  });
  it("a later stop of a broken thread sends a new interrupt", () => {
    const s = withEffects(feedStep(stopped((e) => [e("stop.requested", 2 * MIN, { actor: "bob" })])));
    expect(s).toMatchObject({ status: "stopping", directives: [{ key: "thread-1:u1:stop5", kind: "interrupt", origin: "operator" }] });
  });
  it("an explicit acknowledgement of the first stop arriving after the grace also returns the thread to idle", () => {
    expect(feed(stopped((e) => [e("interrupt.ack", 2 * MIN, { turnId: "u1" })])).status).toBe("idle");
  });
  it("a late turn.completed after the grace is only a late frame: the thread stays broken", () => {
    expect(withEffects(feedStep(stopped((e) => [e("turn.completed", 2 * MIN, { turnId: "u1" })])))).toMatchObject({ status: "broken", applied: { late: true } });
  });
  it.each<[string, (e: ReturnType<typeof eventsOn>) => RadarEvent[], string]>([
    ["an idle thread", (e) => [e("thread.started", 0)], "thread is idle: nothing to stop"],
    ["a completed thread", (e) => [e("turn.started", 0, { turnId: "u1" }), e("turn.completed", 1, { turnId: "u1" })], "thread is completed: nothing to stop"],
  ])("stop.requested on %s does nothing and says so", (_name, events, noteText) => {
    const e = eventsOn();
    const s = withEffects(feedStep([...events(e), e("stop.requested", SEC, { actor: "alice" })]));
    expect(s.directives).toEqual([]);
    expect(s.applied?.note).toBe(noteText);
  });
  it("a second stop while one is pending does nothing", () => {
    const s = withEffects(feedStep(stopped((e) => [e("stop.requested", 2 * SEC)])));
    expect(s).toMatchObject({ status: "stopping", directives: [], applied: { note: "an interrupt is already pending" } });
  });
  it("an interrupt the source itself requested makes it stopping without a directive", () => {
    const s = withEffects(feedStep(running((e) => [retry429(e, 0, 1), e("interrupt.requested", SEC, { turnId: "u1" })])));
    expect(s).toMatchObject({ status: "stopping", directives: [], interrupt: { actor: "source", result: "pending" } });
  });
  it("a turn.interrupted nobody here asked for makes it stopped and the episode interrupted", () => {
    const s = feed(running((e) => [retry429(e, 0, 1), e("turn.interrupted", SEC, { turnId: "u1" })]));
    expect(s).toMatchObject({ status: "stopped", episode: { outcome: "interrupted" } });
  });
});

describe("the policy's own interrupt after exhaustion", () => {
  const exhausted = (more: (e: ReturnType<typeof eventsOn>) => RadarEvent[] = () => []) => running((e) => [retry429(e, 0, 1), ...more(e)]);
  it.each<[string, (e: ReturnType<typeof eventsOn>) => RadarEvent]>([
    ["turn.interrupted", (e) => e("turn.interrupted", 70 * SEC, { turnId: "u1" })],
    ["interrupt.ack", (e) => e("interrupt.ack", 70 * SEC, { turnId: "u1" })],
    ["directive.acked", (e) => e("directive.acked", 70 * SEC, { turnId: "u1", ackResult: "acknowledged" })],
  ])("acknowledged by %s keeps the thread exhausted", (_name, ack) => {
    expect(feed(exhausted((e) => [ack(e)]), 10 * MIN)).toMatchObject({ status: "exhausted", interrupt: { result: "acknowledged", origin: "policy" } });
  });
  it("never acknowledged, the thread is broken 60 s after the exhaustion: the source may still be retrying", () => {
    expect(feed(exhausted(), 125 * SEC)).toMatchObject({ status: "broken", episode: { outcome: "exhausted" } });
  });
  it("a stop pressed while the policy's interrupt is pending does nothing more", () => {
    const s = withEffects(feedStep(exhausted((e) => [e("stop.requested", 70 * SEC)])));
    expect(s).toMatchObject({ status: "exhausted", directives: [], interrupt: { origin: "policy", result: "pending" } });
    expect(s.applied?.note).toMatch(/an interrupt is already pending$/);
  });
});

describe("late timers: a deadline missed while the server was down or busy", () => {
  // The notice at 0 s arms the codex-429-stall-bound deadline at 65 s. The server is down from
  // 30 s and starts again at 10 min: its first tick is 10 min late.
  const DOWN_UNTIL = 10 * MIN;
  const retrying = () => feed(running((e) => [retry429(e, 0, 1)]), 30 * SEC);
  const afterRestart = () => tick(retrying(), T0 + DOWN_UNTIL, T0 + DOWN_UNTIL).state;
  const ackAt = (s: ThreadState, atMs: number, type: "interrupt.ack" | "turn.interrupted" = "interrupt.ack") =>
    reduce(s, { seq: 90, type, at: T0 + atMs, threadId: "thread-1", turnId: "u1" }, T0 + atMs).state;

  it("the episode ends exhausted at its true deadline, not when the tick came", () => {
    expect(afterRestart()).toMatchObject({ status: "exhausted", episode: { outcome: "exhausted", endedAt: T0 + 65 * SEC } });
  });
  it("its interrupt is requested at the tick, with a full grace from then (the source could not hear it sooner)", () => {
    const s = withEffects(tick(retrying(), T0 + DOWN_UNTIL, T0 + DOWN_UNTIL));
    expect(s.interrupt).toMatchObject({ result: "pending", requestedAt: T0 + DOWN_UNTIL, graceEndsAt: T0 + DOWN_UNTIL + 60 * SEC });
    expect(s.directives).toEqual([expect.objectContaining({ kind: "interrupt", at: T0 + DOWN_UNTIL, dueAt: T0 + 65 * SEC })]);
    expect(s.wakeAt).toBe(T0 + DOWN_UNTIL + 60 * SEC);
  });
  it.each<[string, number, ThreadStatus]>([
    ["one second before the grace from the restart ends, it is still exhausted", DOWN_UNTIL + 59 * SEC, "exhausted"],
    ["when that grace ends with no acknowledgement, it is broken", DOWN_UNTIL + 60 * SEC, "broken"],
  ])("%s", (_name, untilMs, status) => {
    expect(feed([], untilMs, afterRestart()).status).toBe(status);
  });
  it.each<[string, "interrupt.ack" | "turn.interrupted"]>([
    ["an acknowledgement", "interrupt.ack"],
    ["the turn's interruption", "turn.interrupted"],
  ])("a relay that reconnects after the restart and sends %s confirms the policy's interrupt: exhausted, never broken", (_name, type) => {
    const acked = ackAt(afterRestart(), DOWN_UNTIL + 20 * SEC, type);
    expect(acked).toMatchObject({ status: "exhausted", interrupt: { result: "acknowledged" }, wakeAt: null });
    expect(feed([], DOWN_UNTIL + 10 * MIN, acked).status).toBe("exhausted");
  });
  it("a tick that is only a little late (a blocked event loop) still gives the whole grace", () => {
    const s = tick(retrying(), T0 + 68 * SEC).state;
    expect(s).toMatchObject({ status: "exhausted", episode: { endedAt: T0 + 65 * SEC }, interrupt: { requestedAt: T0 + 68 * SEC, graceEndsAt: T0 + 128 * SEC } });
  });
  it("an on-time watchdog requests the interrupt at the deadline itself", () => {
    expect(feed([], 65 * SEC, retrying()).interrupt).toMatchObject({ requestedAt: T0 + 65 * SEC, graceEndsAt: T0 + 125 * SEC });
  });

  describe("an operator's stop pending across the restart", () => {
    // Stop pressed at 20 s on a running turn (grace to 80 s); the server is down from 30 s to 10 min.
    const stopping = () => feed(running((e) => [e("stop.requested", 20 * SEC, { actor: "alice" })]), 30 * SEC);
    it("gets a full grace from the restart instead of breaking on the first tick", () => {
      const s = tick(stopping(), T0 + DOWN_UNTIL, T0 + DOWN_UNTIL).state;
      expect(s).toMatchObject({ status: "stopping", interrupt: { result: "pending", requestedAt: T0 + 20 * SEC, graceEndsAt: T0 + DOWN_UNTIL + 60 * SEC } });
    });
    it("a relay that reconnects and acknowledges it leaves the thread stopped, not broken", () => {
      const s = ackAt(tick(stopping(), T0 + DOWN_UNTIL, T0 + DOWN_UNTIL).state, DOWN_UNTIL + 30 * SEC);
      expect(s).toMatchObject({ status: "stopped", interrupt: { result: "acknowledged" } });
    });
    it("still breaks when nothing acknowledges within the grace from the restart", () => {
      const s = tick(stopping(), T0 + DOWN_UNTIL, T0 + DOWN_UNTIL).state;
      expect(feed([], DOWN_UNTIL + 60 * SEC, s)).toMatchObject({ status: "broken", interrupt: { result: "unconfirmed" } });
    });
    it("a server that never went down (no restart time) breaks it when its grace ends", () => {
      expect(tick(stopping(), T0 + DOWN_UNTIL).state.status).toBe("broken");
    });
    it("ticks at times before the restart (a replay of older events) are not affected by it", () => {
      expect(tick(stopping(), T0 + 90 * SEC, T0 + DOWN_UNTIL).state.status).toBe("broken");
    });
  });

  it("a capacity recovery that came due during the downtime is requested at the tick, due at its own time", () => {
    const ON = { capacityRecovery: true };
    const failed = feed(running((e) => [e("turn.failed", 0, { turnId: "u1", error: OVERLOADED })], { settings: ON }));
    const dueAt = failed.recovery!.dueAt;
    const s = withEffects(tick(failed, T0 + DOWN_UNTIL, T0 + DOWN_UNTIL));
    expect(s.directives).toEqual([expect.objectContaining({ kind: "continue", at: T0 + DOWN_UNTIL, dueAt })]);
  });
});

describe("early retries are recorded with how early they came", () => {
  it("an attempt sooner than the advised delay records earlyByMs on the attempt and in applied", () => {
    const s = withEffects(feedStep(running((e) => [retry429(e, 0, 1, { error: { ...RATE_429, retryAfter: "2" } }), e("attempt", 232, { turnId: "u1", attempt: 1 })])));
    expect(s.episode?.attempts[0]).toMatchObject({ startedAt: T0 + 232, earlyByMs: 1768 });
    expect(s.applied).toMatchObject({ earlyByMs: 1768, note: "retry 1 came 1.77 s early" });
  });
  it("an attempt after the advised delay is not early", () => {
    const s = feed(running((e) => [retry429(e, 0, 1, { error: { ...RATE_429, retryAfter: "2" } }), e("attempt", 2030, { turnId: "u1", attempt: 1 })]));
    expect(s.episode?.attempts[0]).toMatchObject({ startedAt: T0 + 2030, earlyByMs: null });
  });
  it("a next notice sooner than the advised delay shows the previous retry came early (advised 2 s, next notice after 0.232 s)", () => {
    const advice = { ...RATE_429, details: { additionalDetails: "Rate limit reached. Please try again in 2s." } };
    const s = withEffects(feedStep(running((e) => [retry429(e, 0, 1, { error: advice }), retry429(e, 232, 2, { error: advice })])));
    expect(s.episode?.attempts.map((a) => a.earlyByMs)).toEqual([1768, null]);
    expect(s.applied?.earlyByMs).toBe(1768);
  });
  it("a policy's estimate is not advice: a quick retry without advice is not early", () => {
    const s = feed(running((e) => [retry429(e, 0, 1), retry429(e, 200, 2)]));
    expect(s.episode?.attempts.map((a) => a.earlyByMs)).toEqual([null, null]);
  });
  it("an attempt with no notice waiting is only noted", () => {
    expect(feedStep(running((e) => [e("attempt", 0, { turnId: "u1", attempt: 1 })])).effects.applied?.note).toBe("no retry notice is waiting for this attempt");
  });
});

describe("capacity recovery (opt-in): promptless continuations after a terminal capacity failure", () => {
  const ON = { capacityRecovery: true };
  const failOverloaded = (e: ReturnType<typeof eventsOn>, at: number, turnId = "u1") => [
    e("retry", at, { turnId, willRetry: false, error: OVERLOADED }),
    e("turn.failed", at + 10, { turnId, error: OVERLOADED }),
  ];

  it("is off by default: a terminal serverOverloaded is just failed", () => {
    expect(feed(running((e) => failOverloaded(e, 0)))).toMatchObject({ status: "failed", recovery: null });
  });
  it("opted in, a terminal serverOverloaded schedules continuation 1/3 within 50–100 % of 1 min", () => {
    const s = feed(running((e) => failOverloaded(e, 0), { settings: ON }));
    expect(s).toMatchObject({ status: "recovery_scheduled", recovery: { attempt: 1, max: 3, state: "scheduled", failedTurnId: "u1", policy: "capacity-recovery" } });
    expect(s.recovery!.dueAt - T0).toBeGreaterThanOrEqual(30 * SEC);
    expect(s.recovery!.dueAt - T0).toBeLessThanOrEqual(60 * SEC);
    expect(s.wakeAt).toBe(s.recovery!.dueAt);
  });
  it("the notice and the turn.failed of one failure schedule one recovery: one owner per failure", () => {
    const events = running((e) => failOverloaded(e, 0), { settings: ON });
    const afterNotice = feed(events.slice(0, -1));
    expect(feed(events).recovery).toEqual(afterNotice.recovery);
  });
  it("when due it fires one continue directive from the recovery", () => {
    const s = withEffects(feedStep(running((e) => failOverloaded(e, 0), { settings: ON }), 60 * SEC));
    expect(s.recovery?.state).toBe("fired");
    expect(s.directives).toEqual([
      { key: "thread-1:u1:recovery1:continue", kind: "continue", turnId: "u1", reason: "model at capacity: promptless continuation 1/3", origin: "recovery", cascade: false, at: s.recovery!.dueAt, dueAt: s.recovery!.dueAt },
    ]);
  });
  it("the turn.started that follows a fired continue is the recovery's own turn, not a new user turn", () => {
    const fired = feed(running((e) => failOverloaded(e, 0), { settings: ON }), 60 * SEC);
    const s = reduce(fired, { seq: 50, type: "turn.started", at: T0 + 61 * SEC, threadId: "thread-1", turnId: "c1" }, T0 + 61 * SEC).state;
    expect(s).toMatchObject({ status: "running", recovery: { state: "fired", turnId: "c1" } });
  });
  it("each failing continuation schedules the next (1, 4, 15 min at 50–100 %), and after the third the recovery gives up", () => {
    const e = eventsOn();
    let s = feed([e("thread.started", 0), e("settings.changed", 0, { settings: ON }), e("turn.started", 0, { turnId: "u1" }), ...failOverloaded(e, 0)]);
    const waits: number[] = [];
    for (const [k, turnId] of [[1, "c1"], [2, "c2"], [3, "c3"]] as const) {
      expect(s.recovery).toMatchObject({ attempt: k, state: "scheduled" });
      const failedAt = s.recovery!.dueAt - T0;
      waits.push(s.recovery!.dueAt - (s.lastEventAt ?? 0));
      s = tick(s, s.recovery!.dueAt).state;
      s = feed([e("turn.started", failedAt + SEC, { turnId }), ...failOverloaded(e, failedAt + 30 * SEC, turnId)], undefined, s);
    }
    expect(s).toMatchObject({ status: "failed", recovery: { attempt: 3, state: "exhausted" } });
    [1, 4, 15].forEach((base, i) => {
      expect(waits[i]).toBeGreaterThanOrEqual(base * MIN * 0.5 - 10);
      expect(waits[i]).toBeLessThanOrEqual(base * MIN);
    });
  });
  it.each<[string, ErrorReport]>([
    ["a bare 503", { httpStatus: 503 }],
    ["capacity text only", { message: "Selected model is at capacity." }],
    ["serverOverloadedBeforeInput (its input was never recorded)", { code: "serverOverloadedBeforeInput" }],
    ["a rate limit", { code: "rateLimitExceeded" }],
    ["a usage limit", { code: "usageLimitExceeded" }],
  ])("is never armed by %s", (_name, error) => {
    const s = feed(running((e) => [e("turn.failed", 0, { turnId: "u1", error })], { settings: ON }));
    expect(s).toMatchObject({ status: "failed", recovery: null });
  });
  it("naming capacity-recovery as the thread's policy opts in", () => {
    expect(feed(running((e) => failOverloaded(e, 0), { settings: { policy: "capacity-recovery" } })).status).toBe("recovery_scheduled");
  });
  it("an explicit capacityRecovery false wins over a named continuation policy", () => {
    expect(feed(running((e) => failOverloaded(e, 0), { settings: { policy: "capacity-recovery", capacityRecovery: false } })).status).toBe("failed");
  });
  it.each<[string, (e: ReturnType<typeof eventsOn>) => RadarEvent, ThreadStatus, string]>([
    ["Stop retrying", (e) => e("stop.requested", 5 * SEC, { actor: "alice" }), "stopped", "stopped by operator"],
    ["a new user turn", (e) => e("turn.started", 5 * SEC, { turnId: "u2" }), "running", "a new user turn started"],
    ["archive or snooze", (e) => e("thread.archived", 5 * SEC), "failed", "the thread was archived or snoozed"],
    ["turning the policy off", (e) => e("settings.changed", 5 * SEC, { settings: { capacityRecovery: false } }), "failed", "capacity recovery was turned off"],
    ["an open approval or question", (e) => e("unknown", 5 * SEC, { awaitingUser: true }), "failed", "an approval or question is open"],
  ])("a pending recovery is cancelled by %s, with the reason recorded", (_name, cancel, status, reason) => {
    const s = withEffects(feedStep(running((e) => [...failOverloaded(e, 0), cancel(e)], { settings: ON }), 30 * MIN));
    expect(s).toMatchObject({ status, recovery: { state: "cancelled", cancelledReason: reason }, directives: [] });
  });
  it("a fired continue the source refuses cancels the recovery", () => {
    const fired = feed(running((e) => failOverloaded(e, 0), { settings: ON }), 60 * SEC);
    const s = reduce(fired, { seq: 60, type: "directive.acked", at: T0 + 61 * SEC, threadId: "thread-1", turnId: "u1", ackResult: "failed", reason: "busy" }, T0 + 61 * SEC).state;
    expect(s).toMatchObject({ status: "failed", recovery: { state: "cancelled", cancelledReason: "the source could not start the continuation: busy" } });
  });
  it("settings that keep recovery on leave a pending recovery alone", () => {
    const s = feed(running((e) => [...failOverloaded(e, 0), e("settings.changed", SEC, { settings: { policy: "recipe-runner" } })], { settings: ON }));
    expect(s).toMatchObject({ status: "recovery_scheduled", settings: { capacityRecovery: true, policy: "recipe-runner" } });
  });
});

describe("state", () => {
  it("starts idle with nothing pending", () => {
    expect(initialThreadState("t")).toMatchObject({ threadId: "t", status: "idle", retry: null, episode: null, wakeAt: null });
  });
  it("is JSON-serialisable: a stored and reloaded state reduces the same", () => {
    const events = running((e) => [retry429(e, 0, 1, { error: { ...RATE_429, retryAfter: "2" } }), e("attempt", 232, { turnId: "u1", attempt: 1 })]);
    const live = feed(events);
    const reloaded = JSON.parse(JSON.stringify(live)) as ThreadState;
    expect(reloaded).toEqual(live);
    expect(tick(reloaded, T0 + 2 * MIN)).toEqual(tick(live, T0 + 2 * MIN));
  });
  it("directives and applied describe only the last call, and are never part of the state", () => {
    const exhausted = feedStep(running((e) => [retry429(e, 0, 1)]), 65 * SEC);
    expect(exhausted.effects.directives).toHaveLength(1);
    expect(exhausted.state).not.toHaveProperty("directives");
    const next = reduce(exhausted.state, { seq: 40, type: "unknown", at: T0 + 66 * SEC, threadId: "thread-1" }, T0 + 66 * SEC);
    expect(next.effects.directives).toEqual([]);
    expect(tick(next.state, T0 + 67 * SEC).effects).toMatchObject({ directives: [], applied: null });
  });
  it("a state stored with the per-step fields of older versions still reduces, and drops them", () => {
    const live = feed(running((e) => [retry429(e, 0, 1)]));
    const stored = { ...live, directives: [], applied: null, endedEpisode: null } as ThreadState;
    const next = reduce(stored, { seq: 40, type: "unknown", at: T0 + 2 * SEC, threadId: "thread-1" }, T0 + 2 * SEC);
    expect(next.state).toEqual(reduce(live, { seq: 40, type: "unknown", at: T0 + 2 * SEC, threadId: "thread-1" }, T0 + 2 * SEC).state);
    expect(next.state).not.toHaveProperty("applied");
  });
  it("a tick with nothing due returns the state untouched", () => {
    const s = tick(feed(running((e) => [retry429(e, 0, 1)])), T0).state;
    expect(tick(s, T0 + SEC).state).toBe(s);
  });
  it("keeps at most 50 attempts per episode, the newest", () => {
    const unlimited = { name: "forever", kinds: ["rate_limit" as const], maxAttempts: null, baseDelayMs: SEC, factor: 1, maxDelayMs: SEC, jitterMin: 0, jitterMax: 0, adviceCapMs: null, graceMs: 60 * SEC };
    const s = feed(running((e) => Array.from({ length: 80 }, (_, i) => e("retry", i * SEC, { turnId: "u1", attempt: i + 1, error: { httpStatus: 429 } })), { settings: { policy: unlimited } }));
    expect(s.episode?.attempts.map((a) => a.n)).toEqual(Array.from({ length: 50 }, (_, i) => i + 31));
  });
});
