import { describe, expect, it } from "vitest";
import type { Directive, RadarClient } from "./client";
import { DirectiveRunner, planDirective, type DirectiveContext } from "./directives";
import { silentLogger } from "./log";

const d = (over: Partial<Directive> = {}): Directive => ({
  id: "dir_1",
  threadId: "th",
  turnId: "tu",
  kind: "interrupt",
  reason: "Stop retrying",
  createdAt: "2026-01-01T00:00:00Z",
  ...over,
});
const known = new Set(["th"]);
const appServer = (turns: Record<string, string> = {}): DirectiveContext => ({
  mode: "codex-app-server",
  knownThreads: known,
  currentTurn: (t) => turns[t] ?? null,
});

describe("directive → action", () => {
  it("app-server interrupt → turn/interrupt for the named turn, or the thread's current one", () => {
    expect(planDirective(d(), appServer())).toEqual({ type: "rpc", method: "turn/interrupt", params: { threadId: "th", turnId: "tu" } });
    expect(planDirective(d({ turnId: null }), appServer({ th: "current" }))).toEqual({
      type: "rpc",
      method: "turn/interrupt",
      params: { threadId: "th", turnId: "current" },
    });
    expect(planDirective(d({ turnId: null }), appServer())).toMatchObject({ type: "fail", detail: expect.stringContaining("no turn in progress") });
  });

  it("app-server continue → a promptless turn/start, unless a turn is running", () => {
    expect(planDirective(d({ kind: "continue", turnId: null }), appServer())).toEqual({
      type: "rpc",
      method: "turn/start",
      params: { threadId: "th", input: [] },
    });
    expect(planDirective(d({ kind: "continue" }), appServer({ th: "busy" }))).toMatchObject({ type: "fail" });
  });

  it("process modes end the process on interrupt and cannot continue", () => {
    for (const mode of ["claude", "codex-exec"] as const) {
      expect(planDirective(d(), { mode, knownThreads: known, childRunning: true })).toEqual({ type: "end-process" });
      expect(planDirective(d(), { mode, knownThreads: known, childRunning: false })).toMatchObject({ type: "fail" });
      expect(planDirective(d({ kind: "continue" }), { mode, knownThreads: known, childRunning: true })).toMatchObject({
        type: "fail",
        detail: expect.stringContaining("not supported"),
      });
    }
  });

  it("leaves directives for threads it does not supervise, fails unknown kinds, prints in pipe mode", () => {
    expect(planDirective(d({ threadId: "other" }), appServer())).toMatchObject({ type: "skip" });
    expect(planDirective(d({ kind: "reboot" }), appServer())).toMatchObject({ type: "fail", detail: 'unknown directive kind "reboot"' });
    expect(planDirective(d({ threadId: "any" }), { mode: "pipe", knownThreads: known, pipeDirectives: "print" })).toEqual({ type: "print" });
    expect(planDirective(d(), { mode: "pipe", knownThreads: known, pipeDirectives: "none" })).toMatchObject({ type: "skip" });
  });
});

describe("the directive runner", () => {
  it("still carries out its own directive after one it only skipped (a skip finishes synchronously)", async () => {
    const executed: string[] = [];
    const runner = new DirectiveRunner({
      client: { ack: async () => ({ done: true, status: 200, message: "ok" }) } as unknown as RadarClient,
      log: silentLogger,
      plan: (directive) => planDirective(directive, appServer({ th: "tu" })),
      execute: async (directive) => {
        executed.push(directive.id);
        return { result: "acknowledged", detail: "done" };
      },
    });
    runner.offer([d({ id: "foreign", threadId: "other" })]);
    await runner.idle();
    runner.offer([d({ id: "ours" })]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    await runner.idle();
    expect(executed).toEqual(["ours"]);
  });
});
