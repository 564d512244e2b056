import { expect, test } from "@playwright/test";
import { ingestAuth, uid, sendEvents, threadRow } from "../support/board-events";

/**
 * Incidents in a real Chromium against the built app: a burst of notices posted through the API
 * opens an incident whose banner appears on the board without a reload; Stop all in this incident
 * stops exactly its threads; its page shows the timeline and links to exactly its window.
 */
const auth = ingestAuth;

const send = sendEvents;

const row = threadRow;

test("a burst opens an incident live; Stop all in this incident stops exactly its threads; its page links to its window", async ({ page, request }) => {
  await page.goto("/");
  await expect(page.getByTestId("live-indicator")).toHaveAttribute("data-status", "live");

  const model = uid("wall-model");
  const wall = [0, 1, 2].map((i) => uid(`wall-${i}`));
  const bystander = uid("bystander");
  const t0 = Date.now() - 5_000;
  await send(request, [
    ...wall.flatMap((id, i) => [
      { threadId: id, type: "turn.started", turnId: "t1", at: t0 + i * 1000, agent: "codex", provider: "openai", model },
      { threadId: id, type: "retry", turnId: "t1", at: t0 + i * 1000 + 500, attempt: 1, maxAttempts: 5, error: { httpStatus: 429, retryAfter: "240" } },
    ]),
    // Retrying too, but on another model: not in this incident.
    { threadId: bystander, type: "turn.started", turnId: "t1", at: t0, agent: "codex", provider: "openai", model: `${model}-other` },
    { threadId: bystander, type: "retry", turnId: "t1", at: t0 + 500, attempt: 1, maxAttempts: 5, error: { httpStatus: 429, retryAfter: "240" } },
  ]);

  // The banner arrives through the live stream, without a reload.
  const banner = page.getByTestId("incident-banner").filter({ hasText: model });
  await expect(banner).toBeVisible();
  await expect(banner.getByTestId("incident-summary")).toHaveText(new RegExp(`^429 rate limit incident — openai · ${model} — 3 threads retrying since \\d\\d:\\d\\d:\\d\\d UTC$`));
  for (const id of wall) await expect(row(page, id).getByTestId("incident-marker")).toBeVisible();
  await expect(row(page, bystander).getByTestId("incident-marker")).toHaveCount(0);
  const incidentId = await banner.getAttribute("data-incident-id");
  // Each marker links to its incident and names it.
  const marker = row(page, wall[0]).getByTestId("incident-marker");
  await expect(marker).toHaveAttribute("href", `/incidents/${incidentId}`);
  await expect(marker).toHaveAttribute("title", `429 rate limit incident — openai · ${model}`);

  // An operator says they are on it; the banner shows who.
  await banner.getByTestId("incident-acknowledge").click();
  await expect(banner.getByTestId("incident-acknowledged")).toHaveText(/is on it$/);

  await banner.getByTestId("incident-stop-all").click();
  await expect(page.getByRole("dialog")).toContainText("Stop retrying on 3 threads?");
  await banner.getByTestId("incident-stop-all-confirm").click();
  await expect(banner.getByTestId("incident-stop-all-message")).toHaveText("Stopping 3 threads.");
  for (const id of wall) await expect(row(page, id).getByTestId("thread-status")).toHaveText("stopping");
  const calm = await (await request.get(`/api/v1/threads/${bystander}`)).json();
  expect(calm.directives.filter((d: { origin: string }) => d.origin === "operator")).toEqual([]);
  expect(calm.thread.status).toBe("retrying");

  // The incident page: timeline, threads, and links whose range is the incident's.
  await page.goto(`/incidents/${incidentId}`);
  await expect(page.getByRole("heading", { name: `429 rate limit incident — openai · ${model}` })).toBeVisible();
  await expect(page.getByTestId("incident-thread")).toHaveCount(3);
  await expect(page.getByTestId("chart-incident-timeline")).toBeVisible();
  const detail = await (await request.get(`/api/v1/incidents/${incidentId}`)).json();
  const href = await page.getByTestId("incident-insights-link").getAttribute("href");
  const range = new URL(href!, "http://radar").searchParams;
  expect(range.get("from")).toBe(detail.startedAt);
  expect(range.get("from")).toBe(new Date(t0 + 500).toISOString());
  const to = Date.parse(range.get("to")!);
  expect(to).toBeGreaterThan(Date.parse(detail.lastNoticeAt));
  expect(to - Date.parse(detail.endedAt ?? detail.serverTime)).toBeLessThanOrEqual(60_000);
  // A note lands in the incident's timeline.
  await page.getByRole("textbox", { name: "Add a note" }).fill("failed over to another model");
  await page.getByTestId("incident-note-add").click();
  await expect(page.getByTestId("incident-notes")).toContainText("failed over to another model");
  const exportHref = await page.getByTestId("incident-export-attempts").getAttribute("href");
  expect(new URL(exportHref!, "http://radar").searchParams.get("from")).toBe(detail.startedAt);
});
