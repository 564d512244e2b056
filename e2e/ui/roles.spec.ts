import { expect, test, type Browser, type BrowserContext, type Page } from "@playwright/test";
import { startServer } from "../support/server";
import { E2E_TOKEN } from "../support/e2e-env";
import { threadRow } from "../support/board-events";

/**
 * Roles in a real Chromium: the admin adds people on the People page; a viewer sees the fleet but
 * no Stop controls and is refused a forged stop (over the API and over the server action); an
 * operator stops a thread and the audit names them. Also the first admin from the setup link, and
 * the sign-in lockout an admin lifts.
 */
test.describe.configure({ mode: "serial" });

const run = Date.now().toString(36);
const OPERATOR = { email: `operator-${run}@e2e.test`, password: "operator-password-1" };
const VIEWER = { email: `viewer-${run}@e2e.test`, password: "viewer-password-1" };
const LOCKED = { email: `forgetful-${run}@e2e.test`, password: "forgetful-password-1" };
const ingest = { authorization: `Bearer ${E2E_TOKEN}` };

/** A browser of its own, nobody signed in. */
const freshContext = (browser: Browser) => browser.newContext({ storageState: { cookies: [], origins: [] } });

async function submitSignIn(page: Page, email: string, password: string) {
  await page.getByTestId("sign-in-email").fill(email);
  await page.getByTestId("sign-in-password").fill(password);
  await page.getByTestId("sign-in-submit").click();
}

async function signedIn(browser: Browser, who: { email: string; password: string }, role: string): Promise<{ context: BrowserContext; page: Page }> {
  const context = await freshContext(browser);
  const page = await context.newPage();
  await page.goto("/sign-in");
  await submitSignIn(page, who.email, who.password);
  await expect(page.getByTestId("signed-in-role")).toHaveText(role);
  return { context, page };
}

async function addPerson(page: Page, who: { email: string; password: string }, role: string) {
  await page.goto("/people");
  await page.getByTestId("new-person-email").fill(who.email);
  await page.getByTestId("new-person-role").selectOption(role);
  await page.getByTestId("new-person-password").fill(who.password);
  await page.getByTestId("new-person-submit").click();
  await expect(page.getByTestId("person-added")).toContainText(`Added ${who.email} as ${role}.`);
  await expect(page.locator(`[data-testid="person-row"][data-email="${who.email}"]`)).toHaveAttribute("data-role", role);
}

async function retryingThread(page: Page, name: string): Promise<string> {
  const id = `${name}-${run}`;
  const response = await page.request.post("/api/v1/events", {
    headers: ingest,
    data: [
      { threadId: id, type: "turn.started", turnId: "t1", agent: "codex", provider: "openai", model: "gpt-5.5", title: name },
      { threadId: id, type: "retry", turnId: "t1", attempt: 1, maxAttempts: 5, error: { httpStatus: 429, message: "Rate limit reached. Please try again in 90s.", retryAfter: "90" } },
    ],
  });
  expect(response.status(), await response.text()).toBe(200);
  return id;
}

const row = threadRow;

test("the admin adds an operator and a viewer; the viewer sees no Stop and a forged stop is refused; the operator's stop is audited under their email", async ({ page, browser }) => {
  await addPerson(page, OPERATOR, "operator");
  await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "People" })).toBeVisible();
  await addPerson(page, VIEWER, "viewer");
  const stoppedByOperator = await retryingThread(page, "operator-stops");
  const leftRetrying = await retryingThread(page, "viewer-cannot-stop");

  // The operator stops a retrying thread; its Stop request carries the server action's id.
  const operator = await signedIn(browser, OPERATOR, "operator");
  await operator.page.goto("/");
  const operatorRow = row(operator.page, stoppedByOperator);
  await expect(operatorRow.getByTestId("thread-status")).toHaveText("retrying");
  const stopRequest = operator.page.waitForRequest((request) => request.method() === "POST" && request.headers()["next-action"] !== undefined);
  await operatorRow.getByTestId("stop-retrying").click();
  const stopActionId = (await stopRequest).headers()["next-action"];
  await expect(operatorRow.getByTestId("thread-status")).toHaveText("stopping");
  await operator.page.goto(`/audit?action=stop&actor=${encodeURIComponent(OPERATOR.email)}`);
  await expect(operator.page.getByTestId("audit-row").first()).toContainText(OPERATOR.email);
  await expect(operator.page.getByTestId("audit-row").first()).toContainText(stoppedByOperator);
  await operator.context.close();

  // The viewer sees the board and the retrying thread, and no control that stops anything.
  const viewer = await signedIn(browser, VIEWER, "viewer");
  await viewer.page.goto("/");
  const viewerRow = row(viewer.page, leftRetrying);
  await expect(viewerRow.getByTestId("thread-status")).toHaveText("retrying");
  await expect(viewer.page.getByTestId("stop-retrying")).toHaveCount(0);
  await expect(viewer.page.getByTestId("stop-all")).toHaveCount(0);
  await expect(viewer.page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "People" })).toHaveCount(0);

  // A forged stop over the API, with the viewer's session cookie: 403 naming the permission.
  const forged = await viewer.context.request.post(`/api/v1/threads/${encodeURIComponent(leftRetrying)}/stop`, { data: {} });
  expect(forged.status()).toBe(403);
  const problem = await forged.json();
  expect(problem.permission).toBe("operator");

  // A forged stop over the server action, called by its id from the viewer's own page.
  const detail = await viewer.context.request.get(`/api/v1/threads/${encodeURIComponent(leftRetrying)}`);
  const key = (await detail.json()).thread.key as number;
  const refusal = await viewer.page.evaluate(
    async ({ id, key }) => {
      const response = await fetch("/", { method: "POST", headers: { "next-action": id, "content-type": "text/plain;charset=UTF-8", accept: "text/x-component" }, body: JSON.stringify([{ key }]) });
      return response.text();
    },
    { id: stopActionId, key },
  );
  expect(refusal).toContain("This needs the operator");
  expect(refusal).toContain(`${VIEWER.email} is a viewer`);
  const after = await viewer.context.request.get(`/api/v1/threads/${encodeURIComponent(leftRetrying)}`);
  expect((await after.json()).thread.status).toBe("retrying");

  // The People page is the admin's: a viewer who finds the URL is told so.
  await viewer.page.goto("/people");
  await expect(viewer.page.getByTestId("needs-role")).toContainText("needs the admin role");
  await viewer.context.close();
});

test("ten wrong passwords lock the account even against the right one, all audited; the admin unlocks it on the People page", async ({ page, browser }) => {
  await addPerson(page, LOCKED, "viewer");
  const context = await freshContext(browser);
  const them = await context.newPage();
  await them.goto("/sign-in");
  for (let attempt = 1; attempt <= 10; attempt++) {
    await submitSignIn(them, LOCKED.email, `wrong-password-${attempt}`);
    // Each refusal is on screen before the next try: the attempts are counted one by one.
    await expect(them.getByTestId("sign-in-error")).toHaveText(attempt < 10 ? "Wrong email or password." : /Too many failed sign-ins/);
    if (attempt < 10) await them.reload();
  }
  await them.reload();
  await submitSignIn(them, LOCKED.email, LOCKED.password);
  await expect(them.getByTestId("sign-in-error")).toContainText("Too many failed sign-ins: this account is locked");
  await expect(them.getByTestId("signed-in-role")).toHaveCount(0);

  await page.goto(`/audit?action=sign-in&actor=${encodeURIComponent(LOCKED.email)}`);
  const rows = page.getByTestId("audit-row");
  await expect(rows).toHaveCount(11);
  await expect(rows.first()).toContainText("refused");
  await expect(rows.first()).toContainText("locked out");
  await expect(rows.filter({ hasText: "wrong email or password" })).toHaveCount(10);

  await page.goto("/people");
  const person = page.locator(`[data-testid="person-row"][data-email="${LOCKED.email}"]`);
  await expect(person.getByTestId("person-lockout")).toContainText("locked until");
  await person.getByTestId("person-unlock").click();
  await expect(person.getByTestId("person-unlock")).toHaveCount(0);
  await expect(person.getByTestId("person-lockout")).toHaveText("—");

  await them.reload();
  await submitSignIn(them, LOCKED.email, LOCKED.password);
  await expect(them.getByTestId("signed-in-role")).toHaveText("viewer");
  await context.close();
});

test("the one-time setup link creates the first admin, who lands on the board signed in; the link then no longer works", async ({ browser }) => {
  // A server of its own with nobody in it: it prints the setup link on start.
  const server = await startServer();
  try {
    await expect.poll(() => /\/setup\?code=\S+/.test(server.output())).toBe(true);
    const link = server.output().match(/(https?:\/\/\S+\/setup\?code=[\w-]+)/)![1];
    const context = await freshContext(browser);
    const page = await context.newPage();
    await page.goto(link);
    await page.getByTestId("setup-email").fill("first-admin@e2e.test");
    await page.getByTestId("setup-password").fill("first-admin-password");
    await page.getByTestId("setup-submit").click();
    await expect(page.getByTestId("signed-in-role")).toHaveText("admin");
    await expect(page).toHaveURL(`${server.url}/`);
    await expect(page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "People" })).toBeVisible();
    await page.goto(link);
    await expect(page.getByText("This setup link is not valid")).toBeVisible();
    await expect(page.getByTestId("setup-email")).toHaveCount(0);
    await context.close();
  } finally {
    await server.stop();
  }
});
