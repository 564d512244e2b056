import { expect, test } from "@playwright/test";
import { clockTime } from "../../scripts/demo/scenarios";
import { ingestAuth, uid, sendEvents } from "../support/board-events";

/**
 * The Limits page in a real Chromium against the built app: usage windows and the threads they
 * block arrive through the real ingestion API and the live stream.
 */
const auth = ingestAuth;

const send = sendEvents;

test("the Limits page shows a window at 92 % with a ticking reset countdown and its blocked threads", async ({ page, request }) => {
  await page.goto("/limits");
  await expect(page.getByRole("heading", { name: "Limits" })).toBeVisible();
  await expect(page.getByTestId("live-indicator")).toHaveAttribute("data-status", "live");

  const account = uid("team");
  const threadId = uid("usage-limited");
  const title = `Migrate the billing tables ${threadId}`;
  // A whole minute about 2 h ahead: the agent's "try again at" text names it to the minute.
  const resetAt = Math.ceil((Date.now() + (2 * 60 + 3) * 60_000) / 60_000) * 60_000;
  await send(request, [
    { type: "limit.updated", provider: "openai", account, window: "primary", windowMinutes: 300, usedPercent: 92, resetsAt: new Date(resetAt).toISOString(), status: "warning" },
    { threadId, type: "turn.started", turnId: "t1", agent: "codex", provider: "openai", model: "gpt-5.5", title },
    {
      threadId,
      type: "turn.failed",
      turnId: "t1",
      error: { httpStatus: 429, code: "usageLimitExceeded", message: `You've hit your usage limit. Try again at ${clockTime(resetAt)}.` },
    },
  ]);

  // The row arrives through the live stream, without a reload.
  const row = page.locator(`[data-testid="limit-row"][data-account="${account}"]`);
  await expect(row).toBeVisible();
  await expect(row).toHaveAttribute("data-status", "warning");
  await expect(row.getByTestId("limit-percent")).toHaveText("92 %");
  await expect(row.getByRole("meter")).toHaveAttribute("aria-valuenow", "92");
  await expect(row.getByTestId("limit-status")).toHaveText("warning");
  await expect(row.getByTestId("reset-time")).toContainText("resets");
  await expect(row.getByTestId("limit-as-of")).toContainText("as of");

  const countdown = row.getByTestId("limit-countdown");
  await expect(countdown).toHaveAttribute("role", "timer");
  await expect(countdown).toHaveText(/^in 2:0\d:\d\d$/);
  const first = await countdown.textContent();
  await expect(countdown).not.toHaveText(first!);

  // The thread waiting on this window's reset is listed and links to its page.
  const blocked = row.getByTestId("limit-blocked").getByRole("link", { name: title });
  await expect(blocked).toBeVisible();
  await blocked.click();
  await expect(page).toHaveURL(new RegExp(`/threads/${threadId}`));

  // The thread page links back to the window's row.
  const back = page.getByTestId("thread-limit-link");
  await expect(back).toHaveText("openai primary window at 92 %");
  await back.click();
  await expect(page).toHaveURL(/\/limits#limit-[0-9a-f]{12}$/);
  await expect(row).toBeVisible();
});
