import { expect, type Page } from "@playwright/test";

/** The default source's opt-in checkboxes on /sources, by their test id. */
export type SourceOptIn = "source-capacity-recovery" | "source-resume-at-reset";

/**
 * Ticks or clears one of the default source's opt-ins and saves. The checkbox is checked by the
 * click alone; the milestone is the server's answer to Save (a server action answers once it has
 * stored), then the setting read back from the server, so no event is posted before the source's
 * setting is stored.
 */
export async function setSourceOptIn(page: Page, optIn: SourceOptIn, on: boolean) {
  await page.goto("/sources");
  const card = page.getByTestId("source-card").filter({ has: page.getByRole("heading", { name: "default", exact: true }) });
  await card.getByTestId(optIn).setChecked(on);
  const saved = page.waitForResponse((response) => response.request().method() === "POST" && response.request().headers()["next-action"] !== undefined);
  await card.getByRole("button", { name: "Save" }).click();
  await saved;
  await page.reload();
  await expect(card.getByTestId(optIn)).toBeChecked({ checked: on });
}
