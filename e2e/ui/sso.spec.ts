import { expect, test, type Browser } from "@playwright/test";
import { freePort } from "../../scripts/lib/port.mjs";
import { startOidcProvider, type ProviderPerson, type RunningProvider } from "../support/oidc-provider";
import { startServer, type RunningServer } from "../support/server";

/**
 * Single sign-on end to end in Chromium: a real OpenID Connect provider on 127.0.0.1 and a radar
 * configured for it, whose `groups` claim maps `oncall` to operator. The radar's port is chosen
 * first, since the provider must know the redirect URI of its client.
 */
const LEAD = { email: "lead@sso.test", password: "lead-password-long" };
const PEOPLE: ProviderPerson[] = [
  { login: "ops", email: "ops@sso.test", emailVerified: true, name: "Olive Ops", groups: ["staff", "oncall"] },
  { login: "reader", email: "reader@sso.test", emailVerified: true, name: "Rita Reader", groups: ["staff"] },
  // The lead already has a password account: joined only when the provider verifies the email.
  { login: "lead-unverified", email: LEAD.email, emailVerified: false, name: "Not Quite Lead", groups: ["oncall"] },
  { login: "lead", email: LEAD.email, emailVerified: true, name: "Lee Lead", groups: [] },
];

let provider: RunningProvider;
let radar: RunningServer;
const threadId = `sso-retrying-${Date.now().toString(36)}`;

test.describe.configure({ mode: "serial" });

test.beforeAll(async () => {
  const port = await freePort();
  provider = await startOidcProvider(`http://127.0.0.1:${port}`, PEOPLE);
  radar = await startServer({
    PORT: String(port),
    ...provider.env,
    RADAR_OIDC_ROLE_CLAIM: "groups",
    RADAR_OIDC_OPERATOR_VALUES: "oncall",
    RADAR_ADMIN_EMAIL: LEAD.email,
    RADAR_ADMIN_PASSWORD: LEAD.password,
  });
  // A retrying thread, so that an operator has something to stop.
  const sent = await fetch(`${radar.url}/api/v1/events`, {
    method: "POST",
    headers: { authorization: `Bearer ${radar.token}`, "content-type": "application/json" },
    body: JSON.stringify([
      { threadId, type: "turn.started", turnId: "t1", agent: "codex", provider: "openai", model: "gpt-5.5" },
      { threadId, type: "retry", turnId: "t1", attempt: 1, maxAttempts: 5, error: { httpStatus: 429, message: "Rate limit reached." } },
    ]),
  });
  expect(sent.status, await sent.text()).toBe(200);
});

test.afterAll(async () => {
  await radar?.stop();
  await provider?.stop();
});

/** A fresh browser (nobody signed in) that signs in at the provider as `login`; returns the page. */
async function signInWithSso(browser: Browser, login: string) {
  const context = await browser.newContext({ storageState: undefined, baseURL: radar.url });
  const page = await context.newPage();
  await page.goto("/");
  await expect(page).toHaveURL(/\/sign-in\?next=/);
  await page.getByRole("button", { name: "Sign in with single sign-on" }).click();
  // The provider's own pages: its login (any password), then its consent.
  await expect(page).toHaveURL(new RegExp(`^${provider.issuer}/`));
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill("anything");
  await page.getByRole("button", { name: "Sign-in" }).click();
  await page.getByRole("button", { name: "Continue" }).click();
  return page;
}

test("a person in the oncall group comes back an operator and sees the Stop controls", async ({ browser }) => {
  const page = await signInWithSso(browser, "ops");
  await expect(page.getByTestId("signed-in-role")).toHaveText("operator");
  await expect(page.getByTestId("signed-in-name")).toHaveText("Olive Ops");
  const row = page.locator(`[data-testid="thread-row"][data-thread-id="${threadId}"]`);
  await expect(row.getByRole("button", { name: "Stop retrying" })).toBeVisible();
  await expect(page.getByTestId("stop-all")).toBeVisible();
  await page.context().close();
});

test("a person in no mapped group comes back a viewer, with no Stop controls", async ({ browser }) => {
  const page = await signInWithSso(browser, "reader");
  await expect(page.getByTestId("signed-in-role")).toHaveText("viewer");
  const row = page.locator(`[data-testid="thread-row"][data-thread-id="${threadId}"]`);
  await expect(row).toBeVisible();
  await expect(row.getByRole("button", { name: "Stop retrying" })).toHaveCount(0);
  await expect(page.getByTestId("stop-all")).toHaveCount(0);
  await page.context().close();
});

test("an existing person's email is joined only when the provider has verified it", async ({ browser }) => {
  const refused = await signInWithSso(browser, "lead-unverified");
  await expect(refused).toHaveURL(/\/sign-in\?/);
  await expect(refused.getByTestId("sign-in-error")).toContainText("only when the provider has verified the email");
  await expect(refused.getByTestId("signed-in-role")).toHaveCount(0);
  await refused.context().close();

  const joined = await signInWithSso(browser, "lead");
  // The existing person, with the role they had (an admin's), not one from the claims.
  await expect(joined.getByTestId("signed-in-role")).toHaveText("admin");
  await joined.context().close();
});

test("the audit log records each single sign-on with the role it gave (read by the lead, whose password still works)", async ({ browser }) => {
  const context = await browser.newContext({ storageState: undefined, baseURL: radar.url });
  const page = await context.newPage();
  await page.goto("/sign-in");
  await page.getByTestId("sign-in-email").fill(LEAD.email);
  await page.getByTestId("sign-in-password").fill(LEAD.password);
  await page.getByTestId("sign-in-submit").click();
  await expect(page.getByTestId("signed-in-role")).toHaveText("admin");
  await page.goto("/audit");
  const sso = page.locator('[data-testid="audit-row"][data-action="sign-in"]').filter({ hasText: "single sign-on" });
  await expect(sso.filter({ hasText: "ops@sso.test" })).toContainText("role operator");
  await expect(sso.filter({ hasText: "reader@sso.test" })).toContainText("role viewer");
  await expect(sso.filter({ hasText: LEAD.email })).toContainText("role admin");
  // The refused attempt made no session, so no single sign-on row names the unverified identity's name.
  await expect(page.locator('[data-testid="audit-row"]').filter({ hasText: "Not Quite Lead" })).toHaveCount(0);
  await context.close();
});
