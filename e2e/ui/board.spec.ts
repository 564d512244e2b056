import { expect, test } from "@playwright/test";
import { ingestAuth, uid, sendEvents, threadRow } from "../support/board-events";

/**
 * The operator board in a real Chromium against the built app; every event goes through the
 * real ingestion API, every directive through the real long-poll.
 */
const auth = ingestAuth;

const send = sendEvents;

const row = threadRow;

test.describe.configure({ mode: "serial" });

test("a 429 retry notice appears live, without a reload, with Retrying 1/5 and a ticking countdown", async ({ page, request }) => {
  await page.goto("/");
  await expect(page.getByTestId("live-indicator")).toHaveAttribute("data-status", "live");
  const id = uid("rate-limited");
  const ADVICE_S = 90;
  const sentAt = Date.now();
  await send(request, [
    { threadId: id, type: "turn.started", turnId: "t1", agent: "codex", provider: "openai", model: "gpt-5.5", title: "Refactor the parser" },
    { threadId: id, type: "retry", turnId: "t1", attempt: 1, maxAttempts: 5, error: { httpStatus: 429, message: `Rate limit reached. Please try again in ${ADVICE_S}s.`, retryAfter: String(ADVICE_S) } },
  ]);
  const threadRow = row(page, id);
  // The row arrives through the live stream: the page is not reloaded, and while the stream is
  // live the board does not poll. (How soon depends on the machine: milestones, not a stopwatch.)
  await expect(threadRow).toBeVisible();
  await expect(page.getByTestId("live-indicator")).toHaveAttribute("data-status", "live");
  await expect(threadRow.getByTestId("retry-attempt")).toHaveText("Retrying 1/5");
  await expect(threadRow.getByTestId("thread-status")).toHaveText("retrying");
  await expect(threadRow.getByTestId("thread-kind")).toHaveText("429 rate limit");
  const countdown = threadRow.getByTestId("countdown");
  await expect(countdown).toHaveAttribute("role", "timer");
  // Provider advice is not the agent's own word, so the time is shown as an estimate ("~").
  await expect(countdown).toHaveText(/^~\d+:\d\d$/);
  const seconds = (text: string | null) => {
    const [minutes, secs] = text!.slice(1).split(":").map(Number);
    return minutes * 60 + secs;
  };
  const firstText = await countdown.textContent();
  const first = seconds(firstText);
  // What is left of the advised wait, however long the page took to show it. The browser's
  // offset to the server clock includes one response's latency, which can only add (at most the
  // time since the notice was sent) to what the countdown shows.
  const elapsed = Date.now() - sentAt;
  expect(first).toBeGreaterThanOrEqual(Math.floor((ADVICE_S * 1000 - elapsed) / 1000) - 1);
  expect(first).toBeLessThanOrEqual(ADVICE_S + Math.ceil(elapsed / 1000));
  // It ticks: wait for the next change, then it shows less.
  await expect(countdown).not.toHaveText(firstText!);
  expect(seconds(await countdown.textContent())).toBeLessThan(first);
});

test("a last error shows its code and two lines of its message; the keyboard opens and closes the full text", async ({ page, request }) => {
  const id = uid("long-error");
  const message = `Overloaded. ${"The model is at capacity for this request; try again shortly. ".repeat(6)}End of message.`;
  await send(request, [
    { threadId: id, type: "turn.started", turnId: "t1", agent: "claude-code", provider: "anthropic", model: "claude-opus-4-8" },
    { threadId: id, type: "retry", turnId: "t1", attempt: 1, maxAttempts: 10, error: { httpStatus: 529, code: "overloaded_error", message } },
  ]);
  await page.goto("/");
  const error = row(page, id).getByTestId("last-error");
  const toggle = error.getByTestId("last-error-toggle");
  const fullText = error.locator("p");
  await expect(toggle).toContainText("529 overloaded_error");
  await expect(toggle).toHaveAttribute("aria-expanded", "false");
  await expect(fullText).toBeHidden();
  await toggle.focus();
  await page.keyboard.press("Enter");
  await expect(toggle).toHaveAttribute("aria-expanded", "true");
  await expect(fullText).toBeVisible();
  await expect(fullText).toHaveText(message);
  await expect(toggle).toContainText("hide full text");
  await expect(page.locator(`#${await toggle.getAttribute("aria-controls")}`)).toHaveText(message);
  await page.keyboard.press("Space");
  await expect(toggle).toHaveAttribute("aria-expanded", "false");
  await expect(fullText).toBeHidden();
});

test("a reset time shows both as a clock time and relative to now", async ({ page, request }) => {
  const id = uid("usage-limited");
  const resetAt = new Date(Date.now() + 12 * 60_000);
  await send(request, [
    { threadId: id, type: "turn.started", turnId: "t1", agent: "codex", provider: "openai", model: "gpt-5.5" },
    {
      threadId: id,
      type: "turn.failed",
      turnId: "t1",
      error: { code: "usageLimitExceeded", message: "You've hit your usage limit.", details: { rateLimits: { primary: { usedPercent: 100, resetsAt: Math.floor(resetAt.getTime() / 1000) } } } },
    },
  ]);
  await page.goto("/");
  const reset = row(page, id).getByTestId("reset-time");
  await expect(reset).toContainText(/resets \d\d:\d\d:\d\d UTC, in \d+ min/);
  // "in N min" is what is left of the 12 minutes when the page rendered it (rounded).
  const minutes = Number(/in (\d+) min/.exec((await reset.textContent())!)![1]);
  expect(minutes).toBeLessThanOrEqual(12);
  expect(minutes).toBeGreaterThanOrEqual(Math.floor((resetAt.getTime() - Date.now()) / 60_000) - 1);
  await expect(reset.locator("time")).toHaveAttribute("datetime", /Z$/);
});

test("Stop retrying turns the row stopping, the source acknowledges, and it turns stopped without a reload", async ({ page, request }) => {
  const id = uid("to-stop");
  await send(request, [
    { threadId: id, type: "turn.started", turnId: "t1", agent: "claude-code", provider: "anthropic", model: "claude-opus-4-8" },
    { threadId: id, type: "retry", turnId: "t1", attempt: 2, maxAttempts: 10, delayMs: 120_000, error: { httpStatus: 529, code: "overloaded_error" } },
  ]);
  await page.goto(`/?q=${id}`);
  const threadRow = row(page, id);
  // The source long-polls for directives the way the relay does, until its thread's stop arrives
  // (every pending directive of the source comes back, so it keeps polling; the test's own
  // timeout bounds it).
  const received = (async () => {
    for (;;) {
      const delivered = await (await request.get("/api/v1/directives?wait=20", { headers: auth })).json();
      const found = delivered.directives.find((d: { threadId: string }) => d.threadId === id);
      if (found) return found;
    }
  })();
  await threadRow.getByRole("button", { name: "Stop retrying" }).click();
  // The server's stop grace (e2e/playwright.config.ts) is long: `stopping` lasts until the ack.
  await expect(threadRow.getByTestId("thread-status")).toHaveText("stopping");
  const directive = await received;
  expect(directive).toMatchObject({ kind: "interrupt", turnId: "t1" });
  const ack = await request.post(`/api/v1/directives/${directive.id}/ack`, { headers: auth, data: { result: "acknowledged" } });
  expect(ack.status()).toBe(200);
  await expect(threadRow.getByTestId("thread-status")).toHaveText("stopped");
  await page.goto("/audit");
  await expect(page.getByTestId("audit-row").filter({ hasText: id })).toContainText("stop");
});

test("Stop all matching stops exactly the filtered rows, after a confirmation naming the count", async ({ page, request }) => {
  const batch = uid("storm");
  const keep = uid("calm");
  const events = [0, 1, 2].flatMap((i) => [
    { threadId: `${batch}-${i}`, type: "turn.started", turnId: "t1", provider: "storm-provider", model: "m1" },
    { threadId: `${batch}-${i}`, type: "retry", turnId: "t1", attempt: 1, error: { httpStatus: 503, code: "server_is_overloaded" } },
  ]);
  events.push(
    { threadId: keep, type: "turn.started", turnId: "t1", provider: "calm-provider", model: "m1" },
    { threadId: keep, type: "retry", turnId: "t1", attempt: 1, error: { httpStatus: 503, code: "server_is_overloaded" } },
  );
  await send(request, events);
  await page.goto(`/?provider=storm-provider`);
  await page.getByTestId("stop-all").click();
  await expect(page.getByRole("dialog")).toContainText("Stop retrying on 3 threads?");
  await page.getByTestId("stop-all-confirm").click();
  await expect(page.getByTestId("stop-all-message")).toHaveText("Stopping 3 threads.");
  for (const i of [0, 1, 2]) await expect(row(page, `${batch}-${i}`).getByTestId("thread-status")).toHaveText("stopping");
  // The unfiltered thread was not stopped: no operator stop on record, still retrying.
  const calm = await (await request.get(`/api/v1/threads/${keep}`)).json();
  expect(calm.directives.filter((d: { origin: string }) => d.origin === "operator")).toEqual([]);
  expect(calm.thread.status).toBe("retrying");
});

test("filters live in the URL and survive a reload", async ({ page, request }) => {
  const id = uid("filtered");
  await send(request, [
    { threadId: id, type: "turn.started", turnId: "t1", provider: "filter-provider", model: "filter-model" },
    { threadId: id, type: "retry", turnId: "t1", attempt: 1, error: { httpStatus: 429 } },
  ]);
  await page.goto("/");
  await page.getByTestId("filter-kind").selectOption("rate_limit");
  await expect(page).toHaveURL(/kind=rate_limit/);
  await page.getByTestId("filter-q").fill(id);
  await page.getByTestId("filter-q").press("Enter");
  await expect(page).toHaveURL(new RegExp(`q=${id}`));
  await expect(page.getByTestId("thread-row")).toHaveCount(1);
  await page.reload();
  await expect(page.getByTestId("filter-kind")).toHaveValue("rate_limit");
  await expect(page.getByTestId("filter-q")).toHaveValue(id);
  await expect(page.getByTestId("thread-row")).toHaveCount(1);
  await expect(row(page, id)).toBeVisible();
});

test("the thread page shows advised against actual gaps and flags an early retry", async ({ page, request }) => {
  const id = uid("early");
  const t0 = Date.now() - 60_000;
  await send(request, [
    { threadId: id, type: "turn.started", turnId: "t1", at: t0, agent: "proxy", provider: "devin", model: "m", title: "Early retries" },
    { threadId: id, type: "retry", turnId: "t1", at: t0 + 1_000, attempt: 1, maxAttempts: 5, error: { httpStatus: 429, message: "Please try again in 2s." } },
    { threadId: id, type: "attempt", turnId: "t1", at: t0 + 1_230, attempt: 1 },
    { threadId: id, type: "retry", turnId: "t1", at: t0 + 2_000, attempt: 2, maxAttempts: 5, error: { httpStatus: 429, message: "Please try again in 2s." } },
    { threadId: id, type: "attempt", turnId: "t1", at: t0 + 4_100, attempt: 2 },
    { threadId: id, type: "progress", turnId: "t1", at: t0 + 5_000 },
  ]);
  await page.goto("/");
  await row(page, id).getByRole("link").first().click();
  await expect(page.getByTestId("thread-page")).toBeVisible();
  const attempts = page.getByTestId("episodes").getByTestId("attempt");
  await expect(attempts.nth(0)).toContainText("advised 2 s");
  await expect(attempts.nth(0)).toContainText("actual 230 ms");
  await expect(attempts.nth(0).getByTestId("early-retry")).toHaveText("retried 1.8 s early");
  await expect(attempts.nth(1).getByTestId("early-retry")).toHaveCount(0);
  await expect(page.getByTestId("episode-attempts")).toHaveText("recovered after 3 attempts");
  await expect(page.getByTestId("timeline").getByTestId("early-retry").first()).toHaveText("retried 1.8 s early");
  await page.getByTestId("timeline").getByText("payload").first().click();
  await expect(page.getByTestId("raw-payload").first()).toContainText(id);
  await page.screenshot({ path: "test-results/thread-page.png", fullPage: false });
});

test("the board at 1440×900 with a varied fleet (screenshot for review)", async ({ page, request }) => {
  const base = uid("fleet");
  await send(request, [
    { threadId: `${base}-a`, type: "turn.started", turnId: "t", agent: "codex", provider: "openai", model: "gpt-5.5", title: "Migrate billing service" },
    { threadId: `${base}-a`, type: "retry", turnId: "t", attempt: 3, maxAttempts: 5, error: { httpStatus: 429, message: "Rate limit reached for gpt-5.5 in organization org-123 on tokens per min. Please try again in 20s.", retryAfter: "20" } },
    { threadId: `${base}-b`, type: "turn.started", turnId: "t", agent: "claude-code", provider: "anthropic", model: "claude-opus-4-8", parentThreadId: `${base}-a` },
    { threadId: `${base}-b`, type: "retry", turnId: "t", attempt: 4, maxAttempts: 10, delayMs: 9_800, error: { httpStatus: 529, code: "overloaded_error", message: "Overloaded" } },
    { threadId: `${base}-c`, type: "turn.started", turnId: "t", agent: "codex", provider: "openai", model: "gpt-5.5-mini" },
    { threadId: `${base}-c`, type: "turn.completed", turnId: "t" },
  ]);
  await page.goto("/");
  // The whole fleet is on the board (and the live stream connected) before the picture is taken.
  for (const suffix of ["a", "b", "c"]) await expect(row(page, `${base}-${suffix}`)).toBeVisible();
  await expect(page.getByTestId("live-indicator")).toHaveAttribute("data-status", "live");
  await page.screenshot({ path: "test-results/board.png", fullPage: false });
});
