/**
 * A stop pending across a server restart, with the REAL Codex CLI under the relay: the operator
 * presses Stop retrying while the relay cannot reach the radar, the server goes down for longer
 * than the stop grace, and comes back. The relay reconnects by itself, takes the interrupt,
 * interrupts Codex and acknowledges, and the thread ends `stopped` — not `broken`, because the
 * acknowledgement grace runs from when the server could be heard again.
 *
 * The relay's backoff while the radar is away is capped at 30 s (scripts/relay/backoff.ts), so it
 * reconnects at most 30 s after the restart; the stop grace is longer than that, and the downtime
 * longer than the grace, so the old rule (grace from the stop) would break the thread on the
 * first tick after the restart.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockProvider, rateLimited, type MockProvider } from "../support/mock-provider";
import { PATIENCE_MS } from "../support/patience";
import { codexEnv, removeTempDirs, startRelay, waitFor, withTimeout, type RelayProcess } from "../support/relay-helpers";
import { startTcpProxy, type TcpProxy } from "../support/relay-proxy";
import { summary, threadDetail } from "../support/relay-radar";
import { startServer, type RunningServer } from "../support/server";

const STOP_GRACE_MS = 45_000;
const DOWNTIME_MS = STOP_GRACE_MS + 2_000;

let server: RunningServer;
let proxy: TcpProxy;
let mock: MockProvider;
let relay: RelayProcess | null = null;
const portOf = (url: string) => Number(new URL(url).port);

beforeAll(async () => {
  // The stall deadline is an hour away: only the operator's stop ends this wait.
  proxy = await startTcpProxy();
  [server, mock] = await Promise.all([startServer({ RADAR_POLICY_GRACE_MS: "3600000", RADAR_STOP_GRACE_MS: String(STOP_GRACE_MS), RADAR_PUBLIC_URL: proxy.url }), startMockProvider()]);
  await proxy.up(portOf(server.url));
});

afterAll(async () => {
  if (relay && relay.child.exitCode === null) relay.kill("SIGKILL");
  await Promise.all([server?.stop(), proxy?.close(), mock?.close()]);
  removeTempDirs();
});

describe("a stop pending across a restart reaches the real agent through the relay", () => {
  it("the relay reconnects after the restart, interrupts Codex and acknowledges: stopped, never broken", async () => {
    mock.enqueue("openai", rateLimited(3600));
    const codex = codexEnv(mock);
    relay = startRelay(["codex-app-server", "--server", proxy.url, "--token", server.token, "--prompt", "say hi", "--cwd", codex.cwd, "--poll-wait", "5s"], {
      env: codex.env,
    });
    const r = relay;
    const threadId = await waitFor(() => /supervising Codex thread (\S+),/.exec(r.stderr())?.[1], PATIENCE_MS, () => r.stderr());
    await waitFor(async () => (await threadDetail(server, threadId))?.thread.status === "retrying", PATIENCE_MS, () => r.stderr());

    // The radar becomes unreachable for the relay; the operator stops the thread on the server itself.
    await proxy.down();
    const stop = await server.fetch(`${server.url}/api/v1/threads/${encodeURIComponent(threadId)}/stop`, { method: "POST", body: JSON.stringify({ reason: "before a restart" }) });
    expect(stop.status).toBe(202);
    const stoppedAt = Date.now();
    await server.stop();
    // Real downtime is the point: longer than the stop grace.
    await new Promise((resolve) => setTimeout(resolve, DOWNTIME_MS));
    await server.restart();
    expect(Date.now() - stoppedAt).toBeGreaterThan(STOP_GRACE_MS);
    expect((await threadDetail(server, threadId))!.thread.status).toBe("stopping");
    await proxy.up(portOf(server.url));

    const stopped = await waitFor(
      async () => {
        const v = await threadDetail(server, threadId);
        return v && v.directives.some((d) => d.kind === "interrupt" && d.state === "acknowledged") ? v : null;
      },
      PATIENCE_MS,
      async () => `${r.stderr()}\n${summary(await threadDetail(server, threadId))}`,
    );
    expect(stopped.thread.status).toBe("stopped");
    const interrupt = stopped.directives.find((d) => d.kind === "interrupt")!;
    expect(interrupt).toMatchObject({ origin: "operator", result: "acknowledged" });
    expect(interrupt.detail).toMatch(/Codex accepted turn\/interrupt/);

    // The relay ends with the supervised turn; Codex never called the provider again.
    const exit = await withTimeout(r.exited, PATIENCE_MS, "relay exit");
    expect(exit.code, r.stderr()).toBe(0);
    expect(mock.calls("openai")).toHaveLength(1);
    expect((await threadDetail(server, threadId))!.thread.status).toBe("stopped");
  }, DOWNTIME_MS + 4 * PATIENCE_MS);
});
