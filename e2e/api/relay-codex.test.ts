/**
 * The relay with the REAL Codex CLI (`codex app-server`, @openai/codex 0.171.0) against the built
 * app and a mock model provider. A 429 with `Retry-After: 3600` makes Codex announce
 * "Reconnecting... 1/5" and then sleep for an hour in silence (protocols.md); the radar must show
 * it, end it at its stall deadline (or on Stop), and the interrupt must reach Codex through the
 * relay, which acknowledges it.
 *
 * The stall deadline is the policy's expected delay (5 s, an estimate: Codex does not say) plus
 * the grace. Two servers: one with RADAR_POLICY_GRACE_MS=2000, where the watchdog ends the wait
 * within seconds (its tests wait for that and read the deadline from the stored attempt, never
 * from the `retrying` status that only lasts those seconds), and one whose grace is an hour, for
 * the tests that must stop a thread while it is still retrying, however busy the machine is.
 */
import { describe, expect, it } from "vitest";
import { overloaded503, rateLimited } from "../support/mock-provider";
import { PATIENCE_MS } from "../support/patience";
import { codexEnv, startRelay, waitFor, withTimeout } from "../support/relay-helpers";
import { summary, threadDetail, type ThreadDetailView } from "../support/relay-radar";
import { relaySuite, type RelaySuite } from "../support/relay-suite";
import { post } from "../support/server";

/**
 * Starts a supervised Codex task whose first model call gets a 429 with Retry-After: 3600 and
 * waits until the radar has stored its retry notice (an episode with its first attempt): that
 * lasts, whatever the watchdog has done since.
 */
async function startLongWait(suite: RelaySuite): Promise<{ threadId: string; view: ThreadDetailView }> {
  suite.mock.enqueue("openai", rateLimited(3600));
  const before = suite.mock.calls("openai").length;
  const codex = codexEnv(suite.mock);
  suite.relay = startRelay(["codex-app-server", "--server", suite.server.url, "--token", suite.server.token, "--prompt", "say hi", "--cwd", codex.cwd, "--poll-wait", "5s"], {
    env: codex.env,
  });
  const r = suite.relay;
  const threadId = await waitFor(() => /supervising Codex thread (\S+),/.exec(r.stderr())?.[1], PATIENCE_MS, () => r.stderr());
  await suite.mock.waitForCalls("openai", before + 1);
  const view = await waitFor(
    async () => {
      const v = await threadDetail(suite.server, threadId);
      return v && v.episodes.at(-1)?.attempts.length ? v : null;
    },
    PATIENCE_MS,
    () => r.stderr(),
  );
  return { threadId, view };
}

describe("relay codex-app-server with the real Codex CLI: the watchdog ends a silent wait", () => {
  const suite = relaySuite();

  it("records Retrying 1/5, turns exhausted at the stall deadline, interrupts Codex through the relay and acknowledges", async () => {
    const { threadId, view } = await startLongWait(suite);
    expect(view.thread.agent).toBe("codex");
    // What the board showed as "Retrying 1/5" is on the record: the episode and its attempt.
    const episode = view.episodes.at(-1)!;
    expect(episode).toMatchObject({ kind: "rate_limit", maxAttempts: 5, policy: "codex-429-stall-bound" });
    expect(episode.attempts[0]).toMatchObject({ n: 1, estimated: true, httpStatus: 429 });
    const deadline = Date.parse(episode.attempts[0].deadlineAt!);
    expect(deadline).toBeGreaterThan(Date.parse(episode.attempts[0].noticeAt));

    // Nothing happens on the wire (Codex sleeps for an hour); the radar's watchdog ends it.
    const exhausted = await waitFor(
      async () => {
        const v = await threadDetail(suite.server, threadId);
        return v && v.thread.status === "exhausted" && v.directives.some((d) => d.kind === "interrupt" && d.state === "acknowledged") ? v : null;
      },
      Math.max(0, deadline - Date.now()) + PATIENCE_MS,
      () => suite.relay!.stderr(),
    );
    expect(Date.now()).toBeGreaterThanOrEqual(deadline);
    const interrupt = exhausted.directives.find((d) => d.kind === "interrupt")!;
    expect(interrupt).toMatchObject({ state: "acknowledged", result: "acknowledged", origin: "policy" });
    expect(Date.parse(interrupt.createdAt)).toBeGreaterThanOrEqual(deadline);
    expect(interrupt.detail).toMatch(/Codex accepted turn\/interrupt/);
    expect(exhausted.episodes.at(-1)).toMatchObject({ outcome: "exhausted", kind: "rate_limit" });

    // Codex itself ended the turn: its own turn/completed with status interrupted is on the record.
    const done = await waitFor(
      async () => {
        const v = await threadDetail(suite.server, threadId);
        return v?.events.some((e) => e.type === "turn.interrupted" && e.nativeType === "turn/completed") ? v : null;
      },
      PATIENCE_MS,
      async () => summary(await threadDetail(suite.server, threadId)),
    );
    expect(done.events.find((e) => e.type === "turn.interrupted")!.raw).toMatchObject({ message: { params: { turn: { status: "interrupted" } } } });
    expect(done.events.some((e) => e.type === "interrupt.requested")).toBe(true);

    // The relay exits once the supervised turn has ended, and Codex made no further provider call.
    const exit = await withTimeout(suite.relay!.exited, PATIENCE_MS, "relay exit");
    expect(exit.code, suite.relay!.stderr()).toBe(0);
    expect(suite.relay!.stderr()).toMatch(/ended interrupted/);
    expect(suite.mock.calls("openai")).toHaveLength(1);
  });

  it("503 server_is_overloaded: Codex retries silently, then fails with serverOverloaded; the relay forwards it and exits 1", async () => {
    // Codex makes 5 calls in all for a 503 without Retry-After (0.2, 0.4, 0.8, 1.6 s apart; protocols.md).
    suite.mock.enqueue("openai", ...Array.from({ length: 5 }, () => overloaded503()));
    const before = suite.mock.calls("openai").length;
    const codex = codexEnv(suite.mock);
    suite.relay = startRelay(["codex-app-server", "--server", suite.server.url, "--token", suite.server.token, "--prompt", "say hi", "--cwd", codex.cwd], { env: codex.env });
    const r = suite.relay;
    const threadId = await waitFor(() => /supervising Codex thread (\S+),/.exec(r.stderr())?.[1], PATIENCE_MS, () => r.stderr());
    const exit = await withTimeout(r.exited, PATIENCE_MS, "relay exit");
    expect(exit.code, r.stderr()).toBe(1);
    expect(r.stderr()).toMatch(/ended failed/);
    expect(suite.mock.calls("openai").length - before).toBe(5);
    const view = await waitFor(async () => {
      const v = await threadDetail(suite.server, threadId);
      return v?.thread.status === "failed" ? v : null;
    }, PATIENCE_MS, async () => summary(await threadDetail(suite.server, threadId)));
    expect(view.thread.lastError).toMatchObject({ kind: "capacity", code: "serverOverloaded" });
  });
});

describe("relay with the real Codex CLI: Stop retrying during a long wait", () => {
  const suite = relaySuite({ policyGraceMs: "long" });

  it("Stop retrying through the API during the long wait reaches Codex before its wait is over and is acknowledged", async () => {
    const { threadId } = await startLongWait(suite);
    // The deadline is an hour away here: the thread stays Retrying 1/5 until it is stopped.
    const retrying = await waitFor(
      async () => {
        const v = await threadDetail(suite.server, threadId);
        return v?.thread.status === "retrying" ? v : null;
      },
      PATIENCE_MS,
      async () => summary(await threadDetail(suite.server, threadId)),
    );
    expect(retrying.thread.retry).toMatchObject({ kind: "rate_limit", attempt: 1, maxAttempts: 5, policy: "codex-429-stall-bound", nextAttemptEstimated: true });
    expect(retrying.thread.lastError).toMatchObject({ httpStatus: 429 });
    const calls = suite.mock.calls("openai");
    const stoppedAt = Date.now();
    const stop = await post(suite.server, `/api/v1/threads/${threadId}/stop`, { reason: "relay e2e: stop during a 1 h wait" });
    expect(stop.status).toBe(202);
    expect(stop.body).toMatchObject({ result: "stopping" });

    const view = await waitFor(
      async () => {
        const v = await threadDetail(suite.server, threadId);
        return v && v.directives.some((d) => d.kind === "interrupt" && d.state === "acknowledged") && v.events.some((e) => e.type === "turn.interrupted") ? v : null;
      },
      PATIENCE_MS,
      () => suite.relay!.stderr(),
    );
    const directive = view.directives.find((d) => d.kind === "interrupt")!;
    expect(directive).toMatchObject({ origin: "operator", result: "acknowledged" });
    // Acknowledged after the stop and long before Codex's one-hour Retry-After would have ended
    // (a wall-clock latency bound would only measure how busy the machine is).
    const acknowledgedAt = Date.parse(directive.acknowledgedAt!);
    expect(acknowledgedAt).toBeGreaterThanOrEqual(stoppedAt);
    expect(acknowledgedAt).toBeLessThan(calls.at(-1)!.at + 3_600_000);
    const final = await waitFor(
      async () => {
        const v = await threadDetail(suite.server, threadId);
        return v?.thread.status === "stopped" ? v : null;
      },
      PATIENCE_MS,
      async () => summary(await threadDetail(suite.server, threadId)),
    );
    expect(final.thread.retry).toBeNull();
    const exit = await withTimeout(suite.relay!.exited, PATIENCE_MS, "relay exit");
    expect(exit.code, suite.relay!.stderr()).toBe(0);
    expect(suite.mock.calls("openai")).toHaveLength(calls.length);
  });

  it("relay codex-exec: Stop retrying ends `codex exec --json` (SIGINT) during a 1 h wait and is acknowledged", async () => {
    suite.mock.enqueue("openai", rateLimited(3600));
    const codex = codexEnv(suite.mock);
    suite.relay = startRelay(
      ["codex-exec", "--server", suite.server.url, "--token", suite.server.token, "--kill-grace", "3s", "--poll-wait", "5s", "--", "--skip-git-repo-check", "say hi"],
      { env: codex.env, cwd: codex.cwd },
    );
    const r = suite.relay;
    const threadId = await waitFor(() => /"thread_id":"([^"]+)"/.exec(r.stdout())?.[1], PATIENCE_MS, () => r.stderr());
    const retrying = await waitFor(async () => {
      const v = await threadDetail(suite.server, threadId);
      return v?.thread.status === "retrying" ? v : null;
    }, PATIENCE_MS, async () => summary(await threadDetail(suite.server, threadId)));
    expect(retrying.thread).toMatchObject({ agent: "codex-exec", retry: { attempt: 1, maxAttempts: 5, kind: "rate_limit" } });
    const stop = await post(suite.server, `/api/v1/threads/${threadId}/stop`, { reason: "relay e2e: stop codex exec" });
    expect(stop.status).toBe(202);
    await withTimeout(r.exited, PATIENCE_MS, "relay exit");
    expect(r.stderr()).toMatch(/codex exec exited \(code \d+\) — ended by a radar directive/);
    const view = await waitFor(async () => {
      const v = await threadDetail(suite.server, threadId);
      return v?.thread.status === "stopped" ? v : null;
    }, PATIENCE_MS, async () => summary(await threadDetail(suite.server, threadId)));
    expect(view.directives.find((d) => d.kind === "interrupt")).toMatchObject({ result: "acknowledged", detail: expect.stringMatching(/codex exec exited .* after SIGINT/) });
  });
});
