/**
 * Continuations the operator or a policy asks for once a turn has ended: resume at reset
 * (opt-in), Resume now, Retry now; and the engine asking nothing a source cannot carry out.
 */
import { describe, expect, it } from "vitest";
import { reduce, tick } from "./reducer";
import { MIN, SEC, T0, eventsOn, feed, feedStep, withEffects } from "./testing";
import type { ErrorReport, RadarEvent, ThreadSettings, ThreadStatus } from "./types";

type E = ReturnType<typeof eventsOn>;
const HOUR_MS = 60 * MIN;

/** Claude signed in with OAuth, 08:28 UTC: "resets 12:28pm (UTC)". T0 is 17:00, so 7:00pm is 2 h later. */
const SESSION_LIMIT: ErrorReport = { httpStatus: 429, message: "You've hit your session limit · resets 7:00pm (UTC)" };
const RESET_AT = T0 + 2 * HOUR_MS;
const OVERLOADED: ErrorReport = { code: "serverOverloaded", message: "Selected model is at capacity." };
const RESUME: ThreadSettings = { resumeAtReset: true };

function running(more: (e: E) => RadarEvent[], settings?: ThreadSettings) {
  const e = eventsOn();
  const start: RadarEvent[] = [e("thread.started", 0)];
  if (settings) start.push(e("settings.changed", 0, { settings }));
  start.push(e("turn.started", 0, { turnId: "u1" }));
  return [...start, ...more(e)];
}

const usageLimited = (e: E) => [e("turn.failed", SEC, { turnId: "u1", error: SESSION_LIMIT })];

describe("resume at reset (opt-in per source)", () => {
  it("is off by default: the thread waits for the reset, and nothing resumes it", () => {
    expect(feed(running(usageLimited))).toMatchObject({ status: "waiting_reset", recovery: null, retry: { kind: "usage_limit", resetAt: RESET_AT } });
  });

  it("opted in, a usage-limit failure with a known reset schedules a continue at the reset plus at most 30 s", () => {
    const s = feed(running(usageLimited, RESUME));
    expect(s).toMatchObject({ status: "recovery_scheduled", retry: { resetAt: RESET_AT }, recovery: { policy: "resume-at-reset", state: "scheduled", failedTurnId: "u1" } });
    expect(s.recovery!.dueAt).toBeGreaterThanOrEqual(RESET_AT);
    expect(s.recovery!.dueAt).toBeLessThanOrEqual(RESET_AT + 30 * SEC);
    expect(s.wakeAt).toBe(s.recovery!.dueAt);
  });

  describe("Codex names the reset to the second in the snapshot it sends just before its minute-only error", () => {
    const snapshot = (e: E, at: number, resetAt: number) =>
      e("unknown", at, { error: { details: { rateLimits: { primary: { usedPercent: 100, resetsAt: resetAt / 1000 } } } } });
    const refused = (e: E, at: number, text: string) => e("turn.failed", at, { turnId: "u1", error: { code: "usageLimitExceeded", message: `You've hit your usage limit. Upgrade to Pro or try again at ${text}.` } });

    it.each<[string, (e: E) => RadarEvent[], number]>([
      ["the snapshot's reset, not the end of the minute the text names", (e) => [snapshot(e, SEC, T0 + 5 * MIN + 7 * SEC), refused(e, 2 * SEC, "5:05 PM")], T0 + 5 * MIN + 7 * SEC],
      ["a snapshot of another window leaves the text's time", (e) => [snapshot(e, SEC, T0 + 20 * MIN), refused(e, 2 * SEC, "5:05 PM")], T0 + 5 * MIN],
      ["a remembered reset that has passed is not used", (e) => [snapshot(e, SEC, T0 + 10 * MIN), refused(e, HOUR_MS, "6:10 PM")], T0 + HOUR_MS + 10 * MIN],
      ["the reset the server found for the text's minute in the source's usage windows (windowResetAt)", (e) => [{ ...refused(e, 2 * SEC, "5:05 PM"), windowResetAt: T0 + 5 * MIN + 4 * SEC }], T0 + 5 * MIN + 4 * SEC],
      ["the event's found reset before the thread's remembered one", (e) => [snapshot(e, SEC, T0 + 5 * MIN + 7 * SEC), { ...refused(e, 2 * SEC, "5:05 PM"), windowResetAt: T0 + 5 * MIN + 4 * SEC }], T0 + 5 * MIN + 4 * SEC],
    ])("%s", (_name, more, resetAt) => {
      const s = feed(running(more, RESUME));
      expect(s).toMatchObject({ status: "recovery_scheduled", retry: { resetAt }, recovery: { policy: "resume-at-reset", state: "scheduled" } });
      expect(s.recovery!.dueAt).toBeGreaterThanOrEqual(resetAt);
    });
  });

  it("a short wait gets a jitter of at most a tenth of it", () => {
    const message = "usage limit reached. Try again in 10s";
    const s = feed(running((e) => [e("turn.failed", SEC, { turnId: "u1", error: { httpStatus: 429, message, details: { resetsAt: (T0 + 11 * SEC) / 1000 } } })], RESUME));
    expect(s.recovery!.dueAt - (T0 + 11 * SEC)).toBeLessThanOrEqual(SEC);
  });

  it("when due it sends one continue, and the turn that follows is the resume's own", () => {
    const due = feed(running(usageLimited, RESUME)).recovery!.dueAt;
    const fired = withEffects(feedStep(running(usageLimited, RESUME), due - T0));
    expect(fired).toMatchObject({ recovery: { state: "fired" } });
    expect(fired.directives).toEqual([
      { key: "thread-1:u1:reset:continue", kind: "continue", turnId: "u1", reason: "usage window reset: promptless continuation", origin: "recovery", cascade: false, at: due, dueAt: due },
    ]);
    const next = reduce(fired, { seq: 90, type: "turn.started", at: due + SEC, threadId: "thread-1", turnId: "c1" }, due + SEC).state;
    expect(next).toMatchObject({ status: "running", recovery: { state: "fired", turnId: "c1" } });
  });

  it("a rate limit, a failure without a reset or a source that cannot continue schedules nothing", () => {
    expect(feed(running((e) => [e("turn.failed", SEC, { turnId: "u1", error: { httpStatus: 429, message: "Rate limit. Try again at 7:00 PM" } })], RESUME)).recovery).toBeNull();
    expect(feed(running((e) => [e("turn.failed", SEC, { turnId: "u1", error: { httpStatus: 429, message: "You've hit your usage limit" } })], RESUME)).recovery).toBeNull();
    expect(feed(running(usageLimited, { ...RESUME, reach: { interrupt: true, continue: false } }))).toMatchObject({ status: "waiting_reset", recovery: null });
  });

  it.each<[string, (e: E) => RadarEvent, ThreadStatus, string]>([
    ["Stop retrying", (e) => e("stop.requested", 5 * SEC, { actor: "alice" }), "stopped", "stopped by operator"],
    ["a new user turn", (e) => e("turn.started", 5 * SEC, { turnId: "u2" }), "running", "a new user turn started"],
    ["archive or snooze", (e) => e("thread.archived", 5 * SEC), "failed", "the thread was archived or snoozed"],
    ["turning the policy off", (e) => e("settings.changed", 5 * SEC, { settings: { resumeAtReset: false } }), "failed", "resume at reset was turned off"],
  ])("is cancelled by %s, with the reason recorded", (_name, cancel, status, reason) => {
    const s = withEffects(feedStep(running((e) => [...usageLimited(e), cancel(e)], RESUME), 3 * HOUR_MS));
    expect(s).toMatchObject({ status, recovery: { state: "cancelled", cancelledReason: reason }, directives: [] });
  });

  it("a usage-limit retry stopped by its policy (advice above the cap) resumes at the reset too, once the stop is confirmed", () => {
    const events = running((e) => [e("retry", SEC, { turnId: "u1", attempt: 1, error: { code: "usageLimitExceeded", message: "Try again at 7:00 PM" } })], {
      ...RESUME,
      policy: { name: "usage-cap", kinds: ["usage_limit"], maxAttempts: 5, baseDelayMs: SEC, factor: 2, maxDelayMs: MIN, jitterMin: 0, jitterMax: 0, adviceCapMs: 5 * MIN, graceMs: MIN },
    });
    const s = withEffects(feedStep(events));
    expect(s).toMatchObject({ status: "recovery_scheduled", interrupt: { origin: "policy", result: "pending" }, recovery: { policy: "resume-at-reset", state: "scheduled" } });
    expect(s.directives).toMatchObject([{ kind: "interrupt", origin: "policy" }]);
  });

  it("turning capacity recovery off leaves a resume at reset alone", () => {
    const s = feed(running((e) => [...usageLimited(e), e("settings.changed", 5 * SEC, { settings: { capacityRecovery: false } })], RESUME));
    expect(s).toMatchObject({ status: "recovery_scheduled", recovery: { state: "scheduled" } });
  });
});

describe("Resume now: a continue for an ended turn", () => {
  const exhausted = (e: E) => [e("retry", SEC, { turnId: "u1", attempt: 9, maxAttempts: 5, error: { httpStatus: 429 } })];
  const failed = (e: E) => [e("turn.failed", SEC, { turnId: "u1", error: { httpStatus: 500 } })];
  const broken = (e: E) => [e("retry", SEC, { turnId: "u1", attempt: 1, error: { httpStatus: 429 } }), e("stop.requested", 2 * SEC), e("unknown", 70 * SEC)];

  it.each<[string, (e: E) => RadarEvent[], ThreadStatus]>([
    ["exhausted", exhausted, "exhausted"],
    ["failed", failed, "failed"],
    ["broken", broken, "broken"],
  ])("on a %s thread it sends one continue of the ended turn, from the operator", (_name, before, status) => {
    const events = running(before);
    expect(feed(events).status).toBe(status);
    const e = eventsOn();
    const at = 80 * SEC;
    const s = withEffects(feedStep([...events, { ...e("resume.requested", at, { actor: "alice" }), seq: 50 }]));
    expect(s).toMatchObject({ status: "recovery_scheduled", recovery: { policy: "resume-now", state: "fired", failedTurnId: "u1", turnId: null } });
    expect(s.directives).toEqual([
      { key: "thread-1:u1:resume50:continue", kind: "continue", turnId: "u1", reason: "Resume now", origin: "operator", cascade: false, at: T0 + at, dueAt: T0 + at },
    ]);
  });

  it("replaces a scheduled resume at reset", () => {
    const e = eventsOn();
    const s = withEffects(feedStep([...running(usageLimited, RESUME), { ...e("resume.requested", 10 * SEC), seq: 50 }]));
    expect(s).toMatchObject({ recovery: { policy: "resume-now", state: "fired" }, directives: [{ kind: "continue" }] });
  });

  it("does nothing while the turn runs, and the source's refusal ends it failed", () => {
    const e = eventsOn();
    const busy = feedStep([...running(() => []), { ...e("resume.requested", 10 * SEC), seq: 50 }]);
    expect(busy.effects).toMatchObject({ directives: [], applied: { note: "the turn is still running: nothing to resume" } });
    const resumed = feed([...running(failed), { ...e("resume.requested", 10 * SEC), seq: 50 }]);
    const refused = reduce(resumed, { seq: 51, type: "directive.acked", at: T0 + 11 * SEC, threadId: "thread-1", directiveId: "thread-1:u1:resume50:continue", ackResult: "failed", reason: "busy" }, T0 + 11 * SEC).state;
    expect(refused).toMatchObject({ status: "failed", recovery: { state: "cancelled" } });
  });
});

describe("Retry now: interrupt the wait, then continue once the source confirms", () => {
  const waiting = (e: E) => [e("retry", SEC, { turnId: "u1", attempt: 1, error: { httpStatus: 429, retryAfter: "30" } })];

  it("interrupts the turn (its descendants untouched), then continues it on the acknowledgement", () => {
    const e = eventsOn();
    const asked = withEffects(feedStep([...running(waiting), { ...e("retry.requested", 5 * SEC, { actor: "alice" }), seq: 50 }]));
    expect(asked).toMatchObject({ status: "stopping", episode: { outcome: "interrupted", outcomeCode: "retryNow" } });
    expect(asked.directives).toEqual([
      { key: "thread-1:u1:retry50", kind: "interrupt", turnId: "u1", reason: "Retry now", origin: "operator", cascade: false, at: T0 + 5 * SEC, dueAt: T0 + 5 * SEC },
    ]);
    const acked = reduce(asked, { seq: 51, type: "directive.acked", at: T0 + 6 * SEC, threadId: "thread-1", turnId: "u1", directiveId: "thread-1:u1:retry50", ackResult: "acknowledged" }, T0 + 6 * SEC);
    expect(acked.state).toMatchObject({ status: "recovery_scheduled", recovery: { policy: "resume-now", state: "fired", failedTurnId: "u1" } });
    expect(acked.effects.directives).toEqual([
      { key: "thread-1:u1:resume51:continue", kind: "continue", turnId: "u1", reason: "Retry now", origin: "operator", cascade: false, at: T0 + 6 * SEC, dueAt: T0 + 6 * SEC },
    ]);
  });

  it("a source that ends the turn itself confirms it the same way", () => {
    const e = eventsOn();
    const asked = feed([...running(waiting), { ...e("retry.requested", 5 * SEC), seq: 50 }]);
    const ended = reduce(asked, { seq: 51, type: "turn.interrupted", at: T0 + 6 * SEC, threadId: "thread-1", turnId: "u1" }, T0 + 6 * SEC);
    expect(ended.effects.directives).toMatchObject([{ kind: "continue", turnId: "u1" }]);
  });

  it("is only noted on a thread that is not waiting", () => {
    const e = eventsOn();
    const s = feedStep([...running(() => []), { ...e("retry.requested", 5 * SEC), seq: 50 }]);
    expect(s.effects).toMatchObject({ directives: [], applied: { note: "thread is running: no backoff to cut short" } });
  });
});

describe("the engine asks nothing its source cannot carry out", () => {
  it("an exhausted retry of a source that cannot interrupt sends no interrupt and never turns broken", () => {
    const s = withEffects(feedStep(running((e) => [e("retry", SEC, { turnId: "u1", attempt: 9, maxAttempts: 5, error: { httpStatus: 429 } })], { reach: { interrupt: false, continue: false } })));
    expect(s).toMatchObject({ status: "exhausted", interrupt: null, directives: [] });
    expect(tick(s, T0 + 10 * MIN).state.status).toBe("exhausted");
  });

  it("capacity recovery is not armed for a source that cannot continue", () => {
    const events = running((e) => [e("retry", SEC, { turnId: "u1", willRetry: false, error: OVERLOADED }), e("turn.failed", 2 * SEC, { turnId: "u1", error: OVERLOADED })], {
      capacityRecovery: true,
      reach: { interrupt: false, continue: false },
    });
    expect(feed(events)).toMatchObject({ status: "failed", recovery: null });
  });
});
