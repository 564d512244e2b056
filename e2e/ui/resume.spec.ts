import { expect, test, type APIRequestContext, type Page } from "@playwright/test";
import { ingestAuth, sendEvents, threadRow, uid } from "../support/board-events";
import { setSourceOptIn } from "../support/source-settings";

/**
 * Operator controls on ended threads: a usage-limited thread of a source with resume at reset
 * shows "Resumes at … (in …)" with Cancel; Resume now sends a continue; archive hides the thread
 * from the board until asked for. Each is audited. The source is a relay that announced it can
 * interrupt and continue.
 */

const setResumeAtReset = (page: Page, on: boolean) => setSourceOptIn(page, "source-resume-at-reset", on);

/** The relay's poll: announces what the source can carry out. */
async function announceRelay(request: APIRequestContext) {
  expect((await request.get("/api/v1/directives?wait=0&can=interrupt,continue", { headers: ingestAuth })).status()).toBe(200);
}

async function usageLimited(request: APIRequestContext, id: string, inMs: number) {
  const now = Date.now();
  await sendEvents(request, [
    { threadId: id, type: "turn.started", turnId: "u1", agent: "claude", provider: "anthropic", title: "Long unattended task" },
    { threadId: id, type: "turn.failed", turnId: "u1", error: { httpStatus: 429, message: "You've hit your usage limit.", details: { resetsAt: (now + inMs) / 1000 } } },
  ]);
}

test.afterEach(async ({ page }) => {
  await setResumeAtReset(page, false);
});

test("a usage-limited thread shows 'Resumes at … (in …)'; Cancel calls it off, audited", async ({ page, request }) => {
  await setResumeAtReset(page, true);
  await announceRelay(request);
  const id = uid("resume-at-reset");
  await usageLimited(request, id, 2 * 60 * 60_000);
  await page.goto(`/threads/${id}`);
  const notice = page.getByTestId("recovery-notice");
  await expect(notice).toHaveAttribute("data-state", "scheduled");
  await expect(notice.getByTestId("resumes-at")).toContainText(/Resumes at .* \(in (1 h 5\d|2 h 0\d) min\)/);
  await notice.getByRole("button", { name: /Cancel the resume/ }).click();
  await expect(notice).toHaveAttribute("data-state", "cancelled");
  await expect(notice).toContainText("Resume at reset cancelled: stopped by operator");
  await page.goto(`/audit?action=stop`);
  await expect(page.getByTestId("audit-row").filter({ hasText: id }).first()).toContainText("Cancel resume at reset");
});

test("Resume now on a failed thread sends a continue, audited; archive hides the thread from the board", async ({ page, request }) => {
  await announceRelay(request);
  const id = uid("resume-now");
  await sendEvents(request, [
    { threadId: id, type: "turn.started", turnId: "u1", agent: "codex", title: "Failed task" },
    { threadId: id, type: "turn.failed", turnId: "u1", error: { httpStatus: 500, message: "upstream error" } },
  ]);
  await page.goto(`/threads/${id}`);
  await page.getByTestId("resume-now").click();
  await expect(page.getByTestId("thread-status").first()).toHaveText("recovery scheduled");
  await expect(page.getByTestId("resume-now")).toHaveCount(0);
  await page.goto("/audit?action=resume");
  await expect(page.getByTestId("audit-row").filter({ hasText: id }).first()).toContainText("sent");

  await page.goto(`/?q=${id}`);
  await expect(threadRow(page, id)).toBeVisible();
  await page.goto(`/threads/${id}`);
  await page.getByTestId("archive").click();
  await expect(page.getByTestId("thread-hidden")).toContainText("Archived");
  await page.goto(`/?q=${id}`);
  await expect(threadRow(page, id)).toHaveCount(0);
  await page.getByTestId("archived-toggle").click();
  await expect(threadRow(page, id)).toBeVisible();
  await page.goto("/audit?action=archive");
  await expect(page.getByTestId("audit-row").filter({ hasText: id }).first()).toContainText("archived");
});
