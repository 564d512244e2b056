/**
 * The relay in `claude` mode with the REAL Claude Code CLI (@anthropic-ai/claude-code 2.1.197,
 * `claude -p --output-format stream-json --verbose`) against the built app and the mock
 * provider (ANTHROPIC_BASE_URL). Claude waits a `retry-after` of up to 60 s exactly and says so
 * (`system/api_retry` with retry_delay_ms), so a 30 s advice is a long wait; an interrupt ends
 * the process (SIGINT: Claude prints "[Request interrupted by user]" and an
 * `error_during_execution` result, then exits 0) and the relay acknowledges.
 */
import { describe, expect, it } from "vitest";
import { hang, rateLimited } from "../support/mock-provider";
import { claudeEnv, startRelay, waitFor, withTimeout, type RelayProcess } from "../support/relay-helpers";
import { summary, threadDetail } from "../support/relay-radar";
import { relaySuite } from "../support/relay-suite";
import { post } from "../support/server";

const suite = relaySuite();

function startClaude(prompt: string): RelayProcess {
  const claude = claudeEnv(suite.mock);
  suite.relay = startRelay(["claude", "--server", suite.server.url, "--token", suite.server.token, "--kill-grace", "3s", "--poll-wait", "5s", "--", prompt], {
    env: claude.env,
    cwd: claude.cwd,
  });
  return suite.relay;
}

/** The session id from the relay's echo of Claude's stdout. */
const sessionOf = (r: RelayProcess) => () => /"session_id":"([^"]+)"/.exec(r.stdout())?.[1];

describe("relay claude with the real Claude Code CLI", () => {
  it("forwards a clean run: the thread completes", async () => {
    const r = startClaude("say hi");
    const exit = await withTimeout(r.exited, 40_000, "claude run");
    expect(exit.code, r.stderr()).toBe(0);
    const sessionId = sessionOf(r)()!;
    expect(sessionId).toBeTruthy();
    const view = await waitFor(async () => {
      const v = await threadDetail(suite.server, sessionId);
      return v?.thread.status === "completed" ? v : null;
    }, 5_000, async () => summary(await threadDetail(suite.server, sessionId)));
    expect(view.thread).toMatchObject({ agent: "claude-code", provider: "anthropic" });
  }, 60_000);

  it("Stop retrying during a 30 s retry-after wait ends Claude through the relay and is acknowledged", async () => {
    suite.mock.enqueue("anthropic", rateLimited(30));
    const before = suite.mock.calls("anthropic").length;
    const r = startClaude("say hi");
    const sessionId = await waitFor(sessionOf(r), 30_000, () => r.stderr());
    await suite.mock.waitForCalls("anthropic", before + 1, 20_000);
    const retrying = await waitFor(async () => {
      const v = await threadDetail(suite.server, sessionId);
      return v?.thread.status === "retrying" ? v : null;
    }, 15_000, async () => summary(await threadDetail(suite.server, sessionId)));
    // Claude says exactly how long it waits: not an estimate.
    expect(retrying.thread.retry).toMatchObject({ kind: "rate_limit", attempt: 1, maxAttempts: 10, nextAttemptEstimated: false });
    expect(r.stdout()).toMatch(/"subtype":"api_retry".*"retry_delay_ms":30000/);

    const stoppedAt = Date.now();
    const stop = await post(suite.server, `/api/v1/threads/${sessionId}/stop`, { reason: "relay e2e: stop Claude" });
    expect(stop.status).toBe(202);
    const exit = await withTimeout(r.exited, 20_000, "relay exit after stop");
    // Claude exits 0 on SIGINT; it was asked to stop long before its 30 s wait was over.
    expect(exit.code, r.stderr()).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(15_000);
    expect(r.stderr()).toMatch(/claude exited \(code 0\)[^\n]*ended by a radar directive/);
    expect(r.stdout()).toContain("[Request interrupted by user]");

    const view = await waitFor(async () => {
      const v = await threadDetail(suite.server, sessionId);
      return v && v.directives.some((d) => d.kind === "interrupt" && d.state === "acknowledged") ? v : null;
    }, 10_000, async () => summary(await threadDetail(suite.server, sessionId)));
    const directive = view.directives.find((d) => d.kind === "interrupt")!;
    expect(directive).toMatchObject({ result: "acknowledged", origin: "operator" });
    expect(directive.detail).toMatch(/claude exited \(code 0\) after SIGINT/);
    expect(view.events.some((e) => e.nativeType === "result")).toBe(true);
    expect(view.thread.status).toBe("stopped");
    // No retry was made after the stop.
    expect(suite.mock.calls("anthropic")).toHaveLength(before + 1);
  }, 90_000);

  it("a retry that never comes back turns exhausted at its deadline and the interrupt ends Claude", async () => {
    // 429 with retry-after 2 s, then the retry itself hangs: Claude goes silent.
    suite.mock.enqueue("anthropic", rateLimited(2), hang());
    const before = suite.mock.calls("anthropic").length;
    const r = startClaude("say hi");
    const sessionId = await waitFor(sessionOf(r), 30_000, () => r.stderr());
    const retrying = await waitFor(async () => {
      const v = await threadDetail(suite.server, sessionId);
      return v?.thread.status === "retrying" ? v : null;
    }, 20_000, async () => summary(await threadDetail(suite.server, sessionId)));
    const deadline = Date.parse(retrying.thread.retry!.deadlineAt!);
    await suite.mock.waitForCalls("anthropic", before + 2, 15_000);

    const exit = await withTimeout(r.exited, Math.max(0, deadline - Date.now()) + 25_000, "relay exit after the stall interrupt");
    expect(exit.code, r.stderr()).toBe(0);
    expect(Date.now()).toBeGreaterThanOrEqual(deadline);
    const view = await waitFor(async () => {
      const v = await threadDetail(suite.server, sessionId);
      return v && v.directives.some((d) => d.kind === "interrupt" && d.state === "acknowledged") ? v : null;
    }, 10_000, async () => summary(await threadDetail(suite.server, sessionId)));
    expect(view.thread.status).toBe("exhausted");
    expect(view.directives.find((d) => d.kind === "interrupt")).toMatchObject({ origin: "policy", result: "acknowledged" });
    expect(view.episodes.at(-1)).toMatchObject({ outcome: "exhausted" });
  }, 150_000);
});
