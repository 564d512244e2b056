import path from "node:path";
import { expect, test } from "@playwright/test";
import { fixturesDir } from "@/lib/ingest/test-fixtures";

/** Sources and tokens, capture upload, the audit trail, and the UTC/local switch. */
const fixtures = fixturesDir();

test("a token is shown once at creation, works for ingestion, and stops working when revoked", async ({ page, request }) => {
  await page.goto("/sources");
  const name = `relay@host-${Date.now().toString(36)}`;
  await page.getByRole("textbox", { name: "New source" }).fill(name);
  await page.getByRole("button", { name: "Create source and token" }).click();
  const shown = page.getByTestId("new-token");
  await expect(shown).toContainText(`New ingest token for ${name}`);
  const token = (await shown.locator("code").textContent())!.trim();
  expect(token).toMatch(/^rr_/);
  const auth = { authorization: `Bearer ${token}` };
  expect((await request.post("/api/v1/events", { headers: auth, data: { threadId: `via-${name}`, type: "thread.started" } })).status()).toBe(200);

  await page.reload();
  await expect(page.getByTestId("new-token")).toHaveCount(0);
  const card = page.getByTestId("source-card").filter({ hasText: name });
  await expect(card.getByTestId("token-row")).toContainText(token.slice(0, 7));
  // Usage against the storage quota: the one event just sent, counted when the page loads.
  await expect(card.getByTestId("source-usage")).toContainText(/Stores 1 event \(< 1 % of [\d,]+\) and \d+ B \(< 1 % of 20 GiB\)/);
  await expect(card).not.toContainText(token);
  await card.getByRole("button", { name: "Revoke" }).click();
  await expect(card.getByTestId("token-row")).toContainText("revoked");
  expect((await request.post("/api/v1/events", { headers: auth, data: { threadId: "x", type: "thread.started" } })).status()).toBe(401);

  await page.goto("/audit");
  await expect(page.getByTestId("audit-row").filter({ hasText: name }).first()).toBeVisible();
});

test("a capture file uploaded on the Sources page reconstructs the incident with its original timing", async ({ page }) => {
  await page.goto("/sources");
  await page.getByTestId("capture-file").setInputFiles(path.join(fixtures, "codex-appserver-429-then-ok.jsonl"));
  await page.getByRole("button", { name: "Import" }).click();
  await expect(page.getByTestId("import-result")).toContainText(/Imported codex capture: \d+ accepted/);
  await page.goto("/threads/01a22840-f87b-75d3-9516-419974b7b058");
  await expect(page.getByTestId("thread-status")).toHaveText("completed");
  await expect(page.getByTestId("episode-row")).toHaveAttribute("data-outcome", "recovered");
  await expect(page.getByTestId("timeline").locator("time").first()).toHaveAttribute("datetime", /^2026-11-29T17:01:16/);
});

test("times read in UTC by default and in local time after the switch, remembered across reloads", async ({ page }) => {
  await page.goto("/audit");
  const firstTime = page.getByTestId("audit-row").first().locator("time");
  await expect(firstTime).toContainText("UTC");
  await page.getByText("Local", { exact: true }).click();
  await expect(firstTime).not.toContainText("UTC");
  await page.reload();
  await expect(page.getByTestId("audit-row").first().locator("time")).not.toContainText("UTC");
  await page.getByText("UTC", { exact: true }).click();
  await expect(page.getByTestId("audit-row").first().locator("time")).toContainText("UTC");
});
