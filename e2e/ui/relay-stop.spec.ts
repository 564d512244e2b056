import { expect, test } from "@playwright/test";
import { E2E_TOKEN } from "../support/e2e-env";
import { rateLimited, startMockProvider, type MockProvider } from "../support/mock-provider";
import { PATIENCE_MS, TEST_TIMEOUT_MS } from "../support/patience";
import { codexEnv, removeTempDirs, startRelay, waitFor, withTimeout, type RelayProcess } from "../support/relay-helpers";
import { ingestAuth } from "../support/board-events";

/**
 * Stop retrying, clicked in the browser, reaches a REAL Codex through the relay: Codex sleeps in
 * a 1-hour `Retry-After` backoff (codex app-server + mock provider), the operator clicks the
 * row's button, the relay sends `turn/interrupt`, Codex ends the turn `interrupted`, the relay
 * acknowledges and the row turns `stopped`.
 */
const auth = ingestAuth;
let mock: MockProvider;
let relay: RelayProcess | null = null;

test.beforeAll(async () => {
  mock = await startMockProvider();
});

test.afterAll(async () => {
  if (relay && relay.child.exitCode === null) relay.kill("SIGKILL");
  await mock?.close();
  removeTempDirs();
});

test("clicking Stop retrying during a long wait interrupts the real Codex turn through the relay", async ({ page, request, baseURL }) => {
  test.setTimeout(TEST_TIMEOUT_MS);
  mock.enqueue("openai", rateLimited(3600));
  const codex = codexEnv(mock);
  relay = startRelay(["codex-app-server", "--server", baseURL!, "--token", E2E_TOKEN, "--prompt", "say hi", "--cwd", codex.cwd, "--poll-wait", "5s"], {
    env: codex.env,
  });
  const r = relay;
  const threadId = await waitFor(() => /supervising Codex thread (\S+),/.exec(r.stderr())?.[1], PATIENCE_MS, () => r.stderr());
  await mock.waitForCalls("openai", 1);

  // Filtered to this thread: other specs share the server and fill the board.
  await page.goto(`/?q=${threadId}`);
  const row = page.locator(`[data-testid="thread-row"][data-thread-id="${threadId}"]`);
  // Codex's 429 stall deadline is the policy's 5 s estimate plus its 60 s grace: the row stays
  // retrying that long, far longer than the page needs even on a busy machine.
  await expect(row).toBeVisible();
  await expect(row.getByTestId("thread-status")).toHaveText("retrying");
  await expect(row).toContainText("1/5");

  await row.getByRole("button", { name: /Stop retrying/ }).click();
  await expect(row.getByTestId("thread-status")).toHaveText("stopped", { timeout: PATIENCE_MS }).catch((error: Error) => {
    throw new Error(`${error.message}\nrelay stderr:\n${r.stderr()}`);
  });

  // The relay carried it out: Codex answered turn/interrupt, ended the turn interrupted, and the relay exited.
  const exit = await withTimeout(r.exited, PATIENCE_MS, "relay exit");
  expect(exit.code, r.stderr()).toBe(0);
  expect(r.stderr()).toMatch(/ended interrupted/);
  const detail = await (await request.get(`/api/v1/threads/${threadId}`)).json();
  expect(detail.directives.find((d: { kind: string }) => d.kind === "interrupt")).toMatchObject({
    origin: "operator",
    state: "acknowledged",
    result: "acknowledged",
  });
  expect(detail.events.some((e: { type: string; nativeType: string }) => e.type === "turn.interrupted" && e.nativeType === "turn/completed")).toBe(true);
  expect(mock.calls("openai")).toHaveLength(1);
});
