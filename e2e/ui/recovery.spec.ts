import { expect, test } from "@playwright/test";
import { E2E_TOKEN } from "../support/e2e-env";
import { setSourceOptIn } from "../support/source-settings";

/**
 * Capacity recovery (opt-in per source): after a terminal "model at capacity" failure the thread
 * shows the scheduled continuation with Stop retrying, and a stop cancels it, saying why.
 */
const auth = { authorization: `Bearer ${E2E_TOKEN}` };

const setCapacityRecovery = (page: import("@playwright/test").Page, on: boolean) => setSourceOptIn(page, "source-capacity-recovery", on);

test.afterEach(async ({ page }) => {
  await setCapacityRecovery(page, false);
});

test("a terminal capacity failure schedules 'Model at capacity. Retrying in ~N min, attempt k/3', and Stop retrying cancels it", async ({ page, request }) => {
  await setCapacityRecovery(page, true);
  // Recovery is scheduled only where the source can continue, and the shared source's capabilities
  // are what its latest poll announced (another spec's poll may have announced less): say it here.
  expect((await request.get("/api/v1/directives?wait=0&can=interrupt,continue", { headers: auth })).status()).toBe(200);
  const id = `capacity-${Date.now().toString(36)}`;
  const failure = { code: "serverOverloaded", message: "Selected model is at capacity. Please try a different model." };
  const response = await request.post("/api/v1/events", {
    headers: auth,
    data: [
      { threadId: id, type: "turn.started", turnId: "t1", agent: "codex", provider: "openai", model: "gpt-6-astra", title: "Long unattended task" },
      { threadId: id, type: "retry", turnId: "t1", willRetry: false, error: failure },
      { threadId: id, type: "turn.failed", turnId: "t1", error: failure },
    ],
  });
  expect(response.status()).toBe(200);
  await page.goto(`/threads/${id}`);
  await expect(page.getByTestId("thread-status").first()).toHaveText("recovery scheduled");
  const notice = page.getByTestId("recovery-notice");
  await expect(notice).toHaveAttribute("data-state", "scheduled");
  await expect(notice).toContainText(/Model at capacity\. Retrying in ~1 min, attempt 1\/3\./);
  await notice.getByRole("button", { name: "Stop retrying" }).click();
  await expect(notice).toHaveAttribute("data-state", "cancelled");
  await expect(notice).toContainText("Capacity recovery cancelled");
});
