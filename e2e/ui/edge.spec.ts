import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test, type Page } from "@playwright/test";
import { incidentEvents } from "../../lib/insights/incident-fixture";
import { E2E_TOKEN } from "../support/e2e-env";

/**
 * The edge in a real Chromium: every page works under its Content-Security-Policy with no
 * violation (charts, the live stream, inline styles), and a page on another origin cannot frame
 * the board.
 */

/** Collects CSP violations, from the page's own events and from the console. */
async function watchViolations(page: Page): Promise<string[]> {
  const violations: string[] = [];
  page.on("console", (message) => {
    if (/Content Security Policy|Refused to (execute|load|apply|connect|frame)/i.test(message.text())) violations.push(message.text());
  });
  await page.exposeFunction("__reportViolation", (text: string) => violations.push(text));
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (event) => {
      (window as unknown as { __reportViolation(text: string): void }).__reportViolation(`${event.violatedDirective} blocked ${event.blockedURI} at ${location.pathname} (${event.sourceFile}:${event.lineNumber}:${event.columnNumber}) ${event.sample}`);
    });
  });
  return violations;
}

test("every page runs under its CSP without a violation", async ({ page, request }) => {
  const ns = `-csp${Date.now().toString(36).slice(-4)}`;
  const t0 = Math.floor(Date.now() / 60_000) * 60_000 - 20 * 60_000;
  const posted = await request.post("/api/v1/events", { headers: { authorization: `Bearer ${E2E_TOKEN}` }, data: incidentEvents(t0, ns) });
  expect(posted.status(), await posted.text()).toBe(200);
  const violations = await watchViolations(page);

  await page.goto("/");
  // The live stream connected (an EventSource to the same origin, under connect-src 'self').
  await expect(page.getByTestId("live-indicator")).toHaveAttribute("data-status", "live");
  const thread = page.locator(`a[href^="/threads/inc-c${ns}"]`).first();
  await expect(thread).toBeVisible();
  await thread.click();
  await expect(page).toHaveURL(new RegExp(`/threads/inc-c${ns}`));
  await expect(page.getByRole("heading", { level: 1 })).toBeVisible();

  await page.goto("/insights");
  await expect(page.getByTestId("chart-notices-table")).toBeAttached();
  await expect(page.locator(".recharts-wrapper").first()).toBeVisible();
  await page.goto("/sources");
  await expect(page.getByRole("heading", { name: "Sources", level: 1 })).toBeVisible();
  await page.goto("/audit");
  await expect(page.getByRole("heading", { level: 1 })).toBeVisible();
  await page.goto("/no-such-page");
  await expect(page.getByText(/not found|could not be found/i).first()).toBeVisible();

  expect(violations).toEqual([]);
});

test("a page on another origin cannot frame the board", async ({ page, baseURL }) => {
  // Another origin: the same machine on another port.
  const framer = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(`<!doctype html><title>framer</title><iframe id="board" src="${baseURL}/" width="800" height="600"></iframe>`);
  });
  await new Promise<void>((resolve) => framer.listen(0, "127.0.0.1", resolve));
  try {
    const refused = page.waitForEvent("console", (message) => /Refused to display|frame-ancestors|X-Frame-Options/i.test(message.text()));
    await page.goto(`http://127.0.0.1:${(framer.address() as AddressInfo).port}/`);
    await refused;
    const frame = page.frames().find((candidate) => candidate !== page.mainFrame());
    expect(frame).toBeDefined();
    // The blocked frame shows the browser's error page, never the board.
    await expect(page.frameLocator("#board").locator("body")).not.toContainText("Retry Radar");
    expect(frame!.url()).not.toBe(`${baseURL}/`);
  } finally {
    framer.close();
  }
});
