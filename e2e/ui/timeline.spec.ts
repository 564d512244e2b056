import { expect, test } from "@playwright/test";
import { E2E_TOKEN } from "../support/e2e-env";

/** The thread page at any size: the newest events first, earlier ones on demand, payloads when opened. */
const auth = { authorization: `Bearer ${E2E_TOKEN}` };

test("a long thread opens with its newest events; Load earlier brings the rest, a payload loads when opened", async ({ page, request }) => {
  const id = `long-${Date.now().toString(36)}`;
  const t0 = Date.now() - 3_600_000;
  // 75 short turns: 150 events, each its own row (progress would be folded).
  const events = Array.from({ length: 150 }, (_, i) => ({
    threadId: id,
    type: i % 2 === 0 ? "turn.started" : "turn.completed",
    turnId: `u${Math.floor(i / 2)}`,
    at: t0 + i * 1000,
  }));
  const response = await request.post("/api/v1/events", { headers: auth, data: events });
  expect(response.status(), await response.text()).toBe(200);

  await page.goto(`/threads/${id}`);
  const timeline = page.getByTestId("timeline");
  const rows = timeline.getByTestId("timeline-event");
  await expect(rows).toHaveCount(100);
  await expect(timeline.getByRole("heading")).toContainText("the latest 100 events");
  await timeline.getByTestId("load-earlier").click();
  await expect(rows).toHaveCount(150);
  await expect(timeline.getByTestId("load-earlier")).toHaveCount(0);
  await expect(timeline.getByRole("heading")).toContainText("150 events");
  await expect(rows.first()).toHaveAttribute("data-type", "turn.started");

  await rows.first().getByText("payload").click();
  await expect(rows.first().getByTestId("raw-payload")).toContainText(`"turnId": "u0"`);
});

test("a payload posted with credentials shows them masked on the thread page", async ({ page, request }) => {
  const id = `masked-${Date.now().toString(36)}`;
  const key = "sk-ant-api03-Xq9vR2mT7wLp4KzN8bYc1dFg6hJs3aQe5uWo0iEr-2tYx7ZAAA";
  const token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZ2VudC0xMjMifQ.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg";
  const response = await request.post("/api/v1/events", {
    headers: auth,
    data: {
      threadId: id,
      type: "retry",
      attempt: 1,
      error: { httpStatus: 401, message: `invalid x-api-key ${key}`, headers: { Authorization: `Bearer ${token}` } },
    },
  });
  expect(response.status(), await response.text()).toBe(200);

  await page.goto(`/threads/${id}`);
  const row = page.getByTestId("timeline").getByTestId("timeline-event").first();
  await expect(row).toHaveAttribute("data-type", "retry");
  await row.getByText("payload").click();
  const payload = row.getByTestId("raw-payload");
  await expect(payload).toContainText(`"Authorization": "Bearer eyJ…••••"`);
  await expect(payload).toContainText(`invalid x-api-key sk-ant-…••••`);
  const shown = await page.locator("body").innerText();
  expect(shown.includes(key) || shown.includes(token)).toBe(false);
});
