import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "@playwright/test";
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifyAlertSignature } from "@/lib/alerts/signature";
import { sendEvents, uid } from "../support/board-events";

/**
 * The Alerts page in a real Chromium: an admin adds a webhook destination (its secret shown
 * once), sends a test, and sees the delivery and its result; the receiver, started here on
 * loopback (allow-listed by the Playwright server), verifies the signature with that secret.
 */
test("the Alerts page adds a destination, sends a test and shows the delivery", async ({ page }) => {
  const got: { body: string; timestamp: string; signature: string }[] = [];
  const receiver = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      got.push({ body: Buffer.concat(chunks).toString("utf8"), timestamp: String(request.headers[TIMESTAMP_HEADER]), signature: String(request.headers[SIGNATURE_HEADER]) });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  try {
    const name = uid("hook");
    await page.goto("/alerts");
    await page.getByTestId("new-destination-name").fill(name);
    await page.getByTestId("new-destination-url").fill(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`);
    await page.getByTestId("new-destination-format").selectOption("json");
    await page.getByTestId("new-destination-submit").click();
    const secret = (await page.getByTestId("alert-destination-secret").textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);

    const destination = page.locator(`[data-testid="alert-destination-row"][data-name="${name}"]`);
    await expect(destination).toBeVisible();
    await destination.getByTestId("alert-send-test").click();
    await expect(page.getByTestId("alert-test-queued")).toContainText(name);

    // The page refreshes itself: the delivery shows up delivered, with the receiver's answer.
    const delivery = page.locator(`[data-testid="alert-delivery-row"][data-destination="${name}"]`);
    await expect(delivery).toHaveAttribute("data-state", "delivered");
    await expect(delivery).toContainText("HTTP 204");
    expect(got).toHaveLength(1);
    expect(JSON.parse(got[0].body)).toMatchObject({ event: "test", state: "fired" });
    expect(verifyAlertSignature({ secret, body: got[0].body, timestamp: got[0].timestamp, signature: got[0].signature, nowMs: Date.now() })).toBe(true);
  } finally {
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
});

test("the Alerts page shows the webhook allow-list, and a refused destination names it", async ({ page }) => {
  await page.goto("/alerts");
  await expect(page.getByTestId("webhook-allow")).toContainText("RADAR_WEBHOOK_ALLOW: 127.0.0.1");
  await page.getByTestId("new-destination-name").fill(uid("refused"));
  await page.getByTestId("new-destination-url").fill("https://hooks.example.com/x");
  await page.getByTestId("new-destination-submit").click();
  await expect(page.getByTestId("alerts-error")).toContainText("hooks.example.com is not in RADAR_WEBHOOK_ALLOW (127.0.0.1)");
});

test("an operator silences an incident's alerts from its banner", async ({ page, request }) => {
  await page.goto("/");
  const model = uid("silence-model");
  const t0 = Date.now() - 5_000;
  await sendEvents(
    request,
    [0, 1, 2].flatMap((i) => {
      const id = uid(`silence-${i}`);
      return [
        { threadId: id, type: "turn.started", turnId: "t1", at: t0 + i * 1000, agent: "codex", provider: "openai", model },
        { threadId: id, type: "retry", turnId: "t1", at: t0 + i * 1000 + 500, attempt: 1, maxAttempts: 5, error: { httpStatus: 429, retryAfter: "240" } },
      ];
    }),
  );
  const banner = page.getByTestId("incident-banner").filter({ hasText: model });
  await expect(banner).toBeVisible();
  await banner.getByTestId("incident-silence").selectOption("60");
  await expect(banner.getByTestId("incident-silenced")).toContainText("Alerts silenced until");
  await banner.getByTestId("incident-unsilence").click();
  await expect(banner.getByTestId("incident-silence")).toBeVisible();
});
