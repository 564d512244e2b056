import { expect, test } from "@playwright/test";
import { ingestAuth } from "../support/board-events";

/**
 * A thread whose source cannot carry out a stop shows no Stop retrying, on the board or its page,
 * and its page says why. The specs share one source: it announces nothing it can do for this
 * test, then announces both again so the other specs' stops are offered as before.
 */
const auth = ingestAuth;

test("a thread whose source announced nothing it can do shows no Stop and says why", async ({ page, request }) => {
  const id = `uncontrolled-${Date.now()}`;
  const now = new Date().toISOString();
  try {
    expect((await request.get("/api/v1/directives?wait=0&can=", { headers: auth })).status()).toBe(200);
    const sent = await request.post("/api/v1/events", {
      headers: auth,
      data: [
        { threadId: id, type: "turn.started", turnId: "u1", at: now },
        { threadId: id, type: "retry", turnId: "u1", at: now, attempt: 1, maxAttempts: 5, error: { httpStatus: 429, retryAfter: "300" } },
      ],
    });
    expect(sent.status()).toBe(200);
    await page.goto(`/?q=${id}`);
    const row = page.locator(`[data-testid="thread-row"][data-thread-id="${id}"]`);
    await expect(row).toBeVisible();
    await expect(row.getByTestId("stop-retrying")).toHaveCount(0);
    await page.goto(`/threads/${id}`);
    await expect(page.getByTestId("control-why")).toHaveText("Reported without a relay: nothing can reach this agent.");
    await expect(page.getByTestId("stop-retrying")).toHaveCount(0);
  } finally {
    await request.get("/api/v1/directives?wait=0&can=interrupt,continue", { headers: auth });
  }
});
