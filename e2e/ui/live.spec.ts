import { expect, test, type Page, type Request } from "@playwright/test";
import { ingestAuth, uid, sendEvents, threadRow } from "../support/board-events";

/**
 * The live-update protocol in a real Chromium: a change notice makes the board refetch only the
 * changed rows it shows, and the page only when a thread is new or its status changed.
 */
const auth = ingestAuth;

const send = sendEvents;

const row = threadRow;

/** The board's reads of the threads API made from now on: page reads and row reads apart. */
function watchThreadReads(page: Page) {
  const reads: URL[] = [];
  const listener = (request: Request) => {
    const url = new URL(request.url());
    if (url.pathname === "/api/v1/threads") reads.push(url);
  };
  page.on("request", listener);
  return {
    pages: () => reads.filter((url) => !url.searchParams.has("keys")),
    rows: () => reads.filter((url) => url.searchParams.has("keys")).map((url) => url.searchParams.get("keys")),
    stop: () => page.off("request", listener),
  };
}

test("a change within the same status refetches only that row; a status change refetches the page", async ({ page, request }) => {
  await page.goto("/");
  await expect(page.getByTestId("live-indicator")).toHaveAttribute("data-status", "live");
  const id = uid("live-row");
  await send(request, [
    { threadId: id, type: "turn.started", turnId: "t1", agent: "codex", provider: "openai", model: "gpt-5.5" },
    { threadId: id, type: "retry", turnId: "t1", attempt: 1, maxAttempts: 5, error: { httpStatus: 429, retryAfter: "120" } },
  ]);
  const threadRow = row(page, id);
  await expect(threadRow.getByTestId("retry-attempt")).toHaveText("Retrying 1/5");
  const key = await threadRow.getAttribute("data-thread-key");

  // Attempt 2: still retrying, so only the row is read again.
  const reads = watchThreadReads(page);
  await send(request, [{ threadId: id, type: "retry", turnId: "t1", attempt: 2, maxAttempts: 5, error: { httpStatus: 429, retryAfter: "120" } }]);
  await expect(threadRow.getByTestId("retry-attempt")).toHaveText("Retrying 2/5");
  // (Other threads' status changes may still refetch the page meanwhile: threads of earlier specs
  // run out their deadlines. What counts is that this change came as a row read.)
  expect(reads.rows()).toContain(key);

  // Progress ends the episode: the status changes, so the page is read again.
  const pagesBefore = reads.pages().length;
  await send(request, [{ threadId: id, type: "progress", turnId: "t1" }]);
  await expect(threadRow.getByTestId("thread-status")).toHaveText("recovered");
  expect(reads.pages().length).toBeGreaterThan(pagesBefore);
  reads.stop();
});
