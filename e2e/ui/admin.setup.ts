import path from "node:path";
import { expect, test as setup } from "@playwright/test";
import { ADMIN_STATE, E2E_ADMIN } from "../support/e2e-env";

/** Signs in as the admin the server created from RADAR_ADMIN_EMAIL, through the real form. */
setup("the admin signs in", async ({ page }) => {
  await page.goto("/");
  await expect(page).toHaveURL(/\/sign-in\?next=%2F$/);
  await page.getByTestId("sign-in-email").fill(E2E_ADMIN.email);
  await page.getByTestId("sign-in-password").fill(E2E_ADMIN.password);
  await page.getByTestId("sign-in-submit").click();
  await expect(page.getByTestId("signed-in-role")).toHaveText("admin");
  await page.context().storageState({ path: path.resolve(import.meta.dirname, "..", "..", ADMIN_STATE) });
});
