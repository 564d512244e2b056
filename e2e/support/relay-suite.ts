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
 * What every real-agent relay suite needs: the built app with short graces (stall deadlines in
 * seconds, a stop grace long enough for a real agent to answer) and the mock model provider.
 */
export function relaySuite(): RelaySuite {
  const suite = { relay: null } as RelaySuite;
  beforeAll(async () => {
    [suite.server, suite.mock] = await Promise.all([startServer({ RADAR_POLICY_GRACE_MS: "2000", RADAR_STOP_GRACE_MS: "20000" }), startMockProvider()]);
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
