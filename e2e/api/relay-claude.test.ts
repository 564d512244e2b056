/**
 * The relay in `claude` mode with the REAL Claude Code CLI (@anthropic-ai/claude-code 2.1.197,
 * `claude -p --output-format stream-json --verbose`) against the built app and the mock
 * provider (ANTHROPIC_BASE_URL). Claude waits a `retry-after` of up to 60 s exactly and says so
 * (`system/api_retry` with retry_delay_ms), so a 60 s advice is a long wait; an interrupt ends
 * the process (SIGINT: Claude prints "[Request interrupted by user]" and an
 * `error_during_execution` result, then exits 0) and the relay acknowledges.
 */
import { describe, expect, it } from "vitest";
import { hang, rateLimited } from "../support/mock-provider";
import { PATIENCE_MS } from "../support/patience";
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
    const exit = await withTimeout(r.exited, PATIENCE_MS, "claude run");
    expect(exit.code, r.stderr()).toBe(0);
    const sessionId = sessionOf(r)()!;
    expect(sessionId).toBeTruthy();
    const view = await waitFor(async () => {
      const v = await threadDetail(suite.server, sessionId);
      return v?.thread.status === "completed" ? v : null;
    }, PATIENCE_MS, async () => summary(await threadDetail(suite.server, sessionId)));
    expect(view.thread).toMatchObject({ agent: "claude-code", provider: "anthropic" });
  });

  it("Stop retrying during a 60 s retry-after wait ends Claude through the relay and is acknowledged", async () => {
    // Claude's longest exact wait (60 s) leaves the radar's deadline (60 s + the suite's 2 s grace)
    // furthest away: the stop below must land while the thread is still retrying.
    suite.mock.enqueue("anthropic", rateLimited(60));
    const before = suite.mock.calls("anthropic").length;
    const r = startClaude("say hi");
    const sessionId = await waitFor(sessionOf(r), PATIENCE_MS, () => r.stderr());
    await suite.mock.waitForCalls("anthropic", before + 1);
    const retrying = await waitFor(async () => {
      const v = await threadDetail(suite.server, sessionId);
      return v?.thread.status === "retrying" ? v : null;
    }, PATIENCE_MS, async () => summary(await threadDetail(suite.server, sessionId)));
    // Claude says exactly how long it waits: not an estimate.
    expect(retrying.thread.retry).toMatchObject({ kind: "rate_limit", attempt: 1, maxAttempts: 10, nextAttemptEstimated: false });
    expect(r.stdout()).toMatch(/"subtype":"api_retry".*"retry_delay_ms":60000/);

    const stop = await post(suite.server, `/api/v1/threads/${sessionId}/stop`, { reason: "relay e2e: stop Claude" });
    expect(stop.status).toBe(202);
    const exit = await withTimeout(r.exited, PATIENCE_MS, "relay exit after stop");
    // Claude exits 0 on SIGINT. It was ended by the stop, not by its 60 s wait running out: the
    // relay says so, Claude printed its interrupt, and it never retried (checked below) — no
    // stopwatch, which would only measure how busy the machine is.
    expect(exit.code, r.stderr()).toBe(0);
    expect(r.stderr()).toMatch(/claude exited \(code 0\)[^\n]*ended by a radar directive/);
    expect(r.stdout()).toContain("[Request interrupted by user]");

    const view = await waitFor(async () => {
      const v = await threadDetail(suite.server, sessionId);
      return v && v.directives.some((d) => d.kind === "interrupt" && d.state === "acknowledged") ? v : null;
    }, PATIENCE_MS, async () => summary(await threadDetail(suite.server, sessionId)));
    const directive = view.directives.find((d) => d.kind === "interrupt")!;
    expect(directive).toMatchObject({ result: "acknowledged", origin: "operator" });
    expect(directive.detail).toMatch(/claude exited \(code 0\) after SIGINT/);
    expect(view.events.some((e) => e.nativeType === "result")).toBe(true);
    expect(view.thread.status).toBe("stopped");
    // No retry was made after the stop.
    expect(suite.mock.calls("anthropic")).toHaveLength(before + 1);
  });

  it("a retry that never comes back turns exhausted at its deadline and the interrupt ends Claude", async () => {
    // 429 with retry-after 2 s, then the retry itself hangs: Claude goes silent. The thread is
    // `retrying` only for those seconds, so the test reads the deadline from the stored attempt.
    suite.mock.enqueue("anthropic", rateLimited(2), hang());
    const before = suite.mock.calls("anthropic").length;
    const r = startClaude("say hi");
    const sessionId = await waitFor(sessionOf(r), PATIENCE_MS, () => r.stderr());
    await suite.mock.waitForCalls("anthropic", before + 2);

    const exit = await withTimeout(r.exited, PATIENCE_MS, "relay exit after the stall interrupt");
    expect(exit.code, r.stderr()).toBe(0);
    const view = await waitFor(async () => {
      const v = await threadDetail(suite.server, sessionId);
      return v && v.directives.some((d) => d.kind === "interrupt" && d.state === "acknowledged") ? v : null;
    }, PATIENCE_MS, async () => summary(await threadDetail(suite.server, sessionId)));
    const episode = view.episodes.at(-1)!;
    expect(episode).toMatchObject({ kind: "rate_limit", outcome: "exhausted" });
    const attempt = episode.attempts.at(-1)!;
    expect(attempt).toMatchObject({ estimated: false, httpStatus: 429 });
    const deadline = Date.parse(attempt.deadlineAt!);
    // The radar waited for the advised 2 s and its grace, and interrupted only at the deadline.
    expect(deadline).toBeGreaterThanOrEqual(Date.parse(attempt.noticeAt) + 2_000);
    const interrupt = view.directives.find((d) => d.kind === "interrupt")!;
    expect(Date.parse(interrupt.createdAt)).toBeGreaterThanOrEqual(deadline);
    expect(view.thread.status).toBe("exhausted");
    expect(interrupt).toMatchObject({ origin: "policy", result: "acknowledged" });
  });
});
