import { expect, test } from "@playwright/test";

/**
 * The first screen of a fresh install, on the suite's still-empty database: its own project runs
 * before every spec that sends events (playwright.config.ts).
 */
test("a new user sees how to send the first event, with this server's URL", async ({ page, baseURL }) => {
  await page.goto("/");
  const empty = page.getByTestId("empty-board");
  await expect(empty).toContainText("No threads yet");
  await expect(empty).toContainText(`${baseURL}/api/v1/events`);
});
