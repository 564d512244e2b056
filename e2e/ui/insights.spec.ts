import { expect, test } from "@playwright/test";
import { incidentEvents } from "../../lib/insights/incident-fixture";
import { E2E_TOKEN } from "../support/e2e-env";

/**
 * The insights page in a real Chromium: the known incident (lib/insights/incident-fixture.ts)
 * goes in through the ingestion API 20 minutes ago, under provider names of its own (other
 * specs share this server); the range and a filter change, and the charts and the URL follow.
 */
test("insights follow the time range and a filter, and the URL keeps them", async ({ page, request }) => {
  const ns = `-${Date.now().toString(36).slice(-4)}`;
  const t0 = Math.floor(Date.now() / 60_000) * 60_000 - 20 * 60_000;
  const events = incidentEvents(t0, ns);
  const posted = await request.post("/api/v1/events", { headers: { authorization: `Bearer ${E2E_TOKEN}` }, data: events });
  expect(posted.status(), await posted.text()).toBe(200);

  await page.goto("/insights");
  await expect(page.getByRole("heading", { name: "Insights", level: 1 })).toBeVisible();
  await expect(page.getByTestId("range-24h")).toHaveAttribute("aria-current", "true");
  await expect(page.getByTestId("insights-range")).toContainText("per hour");
  const noticeRows = page.getByTestId("chart-notices-table").locator("tbody tr");
  await expect.poll(() => noticeRows.count()).toBeGreaterThanOrEqual(24);

  // The time range: the last hour, per minute.
  await page.getByTestId("range-1h").click();
  await expect(page).toHaveURL(/[?&]range=1h\b/);
  await expect(page.getByTestId("insights-range")).toContainText("per minute");
  await expect.poll(() => noticeRows.count()).toBeGreaterThanOrEqual(60);

  // A filter: only this incident's Anthropic thread (3 notices, 1 recovered + 1 exhausted).
  await page.getByTestId("filter-provider").selectOption(`anthropic${ns}`);
  await expect(page).toHaveURL(new RegExp(`[?&]provider=anthropic${ns}\\b`));
  await expect(page).toHaveURL(/[?&]range=1h\b/);
  await expect(page.getByTestId("stat-notices").locator("dd").first()).toHaveText("3");
  await expect(page.getByTestId("recovery-ratio")).toHaveText("50 %");
  const top = page.getByTestId("top-threads-table").locator("tbody tr");
  await expect(top).toHaveCount(1);
  await expect(top.first()).toHaveAttribute("data-thread-id", `inc-c${ns}`);
  await expect(top.first().getByRole("link")).toHaveAttribute("href", new RegExp(`^/threads/inc-c${ns}\\?source=`));

  // The notices table (the chart's fallback) says the same: 1 rate limit and 2 transport notices.
  await page.getByTestId("chart-notices-show-table").click();
  const table = page.getByTestId("chart-notices-table");
  await expect(table).toBeVisible();
  const minute3 = table.locator(`tr[data-bucket="${new Date(t0 + 3 * 60_000).toISOString()}"]`);
  await expect(minute3.locator('[data-series="rate_limit"]')).toHaveText("1");
  await expect(minute3.locator('[data-series="transport"]')).toHaveText("2");
  await page.getByTestId("chart-notices-show-chart").click();

  // Split the notices by model: the URL carries it, the filter stays.
  await page.getByTestId("split-model").click();
  await expect(page).toHaveURL(/[?&]split=model\b/);
  await expect(page.getByTestId("chart-notices-table").locator('thead [data-series="claude-opus"]')).toHaveCount(1);

  // A custom range (the incident's ten minutes) is an absolute permalink.
  await page.getByTestId("range-custom").click();
  const utcInput = (ms: number) => new Date(ms).toISOString().slice(0, 16);
  await page.getByTestId("custom-from").fill(utcInput(t0));
  await page.getByTestId("custom-to").fill(utcInput(t0 + 10 * 60_000));
  await page.getByTestId("custom-apply").click();
  await expect(page).toHaveURL(new RegExp(`from=${encodeURIComponent(new Date(t0).toISOString())}`));
  await expect(page.getByTestId("range-custom")).toHaveAttribute("aria-expanded", "true");
  await expect(page.getByTestId("stat-notices").locator("dd").first()).toHaveText("3");
  await expect(page.getByTestId("insights-permalink")).toHaveAttribute("href", new RegExp(`to=${encodeURIComponent(new Date(t0 + 10 * 60_000).toISOString())}`));

  // Every provider of the incident, for the picture.
  await page.getByTestId("filter-provider").selectOption("");
  await expect(page).not.toHaveURL(/provider=/);
  await expect(page.getByTestId("chart-notices")).toHaveAttribute("data-empty", "false");
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.screenshot({ path: "test-results/insights.png" });
});
