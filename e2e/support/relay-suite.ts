import { afterAll, afterEach, beforeAll } from "vitest";
import { startMockProvider, type MockProvider } from "./mock-provider";
import { removeTempDirs, type RelayProcess } from "./relay-helpers";
import { startServer, type RunningServer } from "./server";

export interface RelaySuite {
  server: RunningServer;
  mock: MockProvider;
  /** The relay the current test started; killed after each test if it still runs. */
  relay: RelayProcess | null;
}

/**
 * What every real-agent relay suite needs: the built app and the mock model provider. By default
 * stall deadlines come seconds after a retry notice (RADAR_POLICY_GRACE_MS=2000), for tests that
 * wait for the watchdog to end a silent wait. A test that must act while a thread is still
 * retrying (Stop retrying during a long wait) asks for `policyGraceMs: "long"`: then the deadline
 * is an hour away and nothing a busy machine does can make the watchdog win the race. The stop
 * grace is long enough for a real agent to answer on a busy machine.
 */
export function relaySuite(options: { policyGraceMs?: "short" | "long" } = {}): RelaySuite {
  const suite = { relay: null } as RelaySuite;
  const policyGrace = options.policyGraceMs === "long" ? "3600000" : "2000";
  beforeAll(async () => {
    [suite.server, suite.mock] = await Promise.all([startServer({ RADAR_POLICY_GRACE_MS: policyGrace, RADAR_STOP_GRACE_MS: "120000" }), startMockProvider()]);
  });
  afterEach(async () => {
    const relay = suite.relay;
    suite.relay = null;
    if (relay && relay.child.exitCode === null) {
      relay.kill("SIGKILL");
      await relay.exited;
    }
  });
  afterAll(async () => {
    await Promise.all([suite.server?.stop(), suite.mock?.close()]);
    removeTempDirs();
  });
  return suite;
}
