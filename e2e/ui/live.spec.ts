import { expect, test, type APIRequestContext, type Page, type Request } from "@playwright/test";
import { ingestAuth, uid, sendEvents, threadRow } from "../support/board-events";

/**
 * The live-update protocol in a real Chromium: a change notice brings only the changed rows a
 * board shows (carried by the notice for the unfiltered board, read by key for a filtered one),
 * and the page only when a thread is new or its status changed; after a burst the board shows
 * what the server does, and after a reconnect nothing is missed.
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
    rowReads: () => reads.filter((url) => url.searchParams.has("keys")),
    stop: () => page.off("request", listener),
  };
}

/**
 * Opens the board at `path`, then a thread starts retrying (attempt 1 of 5, openai) and moves to
 * attempt 2 while the board shows it: its row, its key and the board's reads since attempt 1 showed.
 */
async function retryingThenNext(page: Page, request: APIRequestContext, id: string, path: string) {
  await page.goto(path);
  await expect(page.getByTestId("live-indicator")).toHaveAttribute("data-status", "live");
  await send(request, [
    { threadId: id, type: "turn.started", turnId: "t1", agent: "codex", provider: "openai", model: "gpt-5.5" },
    { threadId: id, type: "retry", turnId: "t1", attempt: 1, maxAttempts: 5, error: { httpStatus: 429, retryAfter: "120" } },
  ]);
  const threadRow = row(page, id);
  await expect(threadRow.getByTestId("retry-attempt")).toHaveText("Retrying 1/5");
  const key = await threadRow.getAttribute("data-thread-key");
  const reads = watchThreadReads(page);
  await send(request, [{ threadId: id, type: "retry", turnId: "t1", attempt: 2, maxAttempts: 5, error: { httpStatus: 429, retryAfter: "120" } }]);
  await expect(threadRow.getByTestId("retry-attempt")).toHaveText("Retrying 2/5");
  return { threadRow, key, reads };
}

test("a change within the same status refetches only that row; a status change refetches the page", async ({ page, request }) => {
  const id = uid("live-row");
  // Attempt 2: still retrying, so only the row changes: the unfiltered board takes it from the notice.
  const { threadRow, key, reads } = await retryingThenNext(page, request, id, "/");
  // (Other threads' status changes may still refetch the page meanwhile: threads of earlier specs
  // run out their deadlines. What counts is that this change needed no row read.)
  expect(reads.rows()).not.toContain(key);

  // Progress ends the episode: the status changes, so the page is read again.
  const pagesBefore = reads.pages().length;
  await send(request, [{ threadId: id, type: "progress", turnId: "t1" }]);
  await expect(threadRow.getByTestId("thread-status")).toHaveText("recovered");
  expect(reads.pages().length).toBeGreaterThan(pagesBefore);
  reads.stop();
});

test("a filtered board reads a changed row by key with its filter", async ({ page, request }) => {
  const { key, reads } = await retryingThenNext(page, request, uid("live-filtered"), "/?provider=openai");
  const read = reads.rowReads().find((url) => url.searchParams.get("keys")?.split(",").includes(key!));
  expect([read?.searchParams.get("matching"), read?.searchParams.get("provider")]).toEqual(["1", "openai"]);
  reads.stop();
});

/** What the board shows of `ids`, and what the server's first page of the unfiltered board says of them. */
async function shownAndServed(page: Page, ids: string[]) {
  const shown = await page.locator('[data-testid="thread-row"]').evaluateAll(
    (rows, ids) =>
      rows
        .filter((row) => ids.includes(row.getAttribute("data-thread-id")!))
        // The attempt the row shows: "Retrying 3/9", "after 6/9" or none.
        .map((row) => `${row.getAttribute("data-thread-id")} ${row.getAttribute("data-status")} ${/\d+/.exec(row.querySelector('[data-testid="retry-attempt"]')!.textContent ?? "")?.[0] ?? 0}`),
    ids,
  );
  const board = (await page.evaluate(() => fetch("/api/v1/threads?order=attention").then((r) => r.json()))) as {
    threads: { id: string; status: string; retry: { attempt: number; maxAttempts: number | null } | null }[];
  };
  const served = board.threads.filter((thread) => ids.includes(thread.id)).map((thread) => `${thread.id} ${thread.status} ${thread.retry?.attempt ?? 0}`);
  return { shown, served };
}

test("after a burst of changes the board shows exactly what the server does", async ({ page, request }) => {
  await page.goto("/");
  await expect(page.getByTestId("live-indicator")).toHaveAttribute("data-status", "live");
  const ids = Array.from({ length: 12 }, (_, i) => uid(`live-burst-${i}`));
  // Many posts without waiting for the board: threads arrive, move through attempts, some recover.
  const posts: Promise<unknown>[] = [];
  for (let attempt = 1; attempt <= 6; attempt++) {
    for (const [i, id] of ids.entries()) {
      const events: object[] = [{ threadId: id, type: "retry", turnId: "t1", attempt, maxAttempts: 9, agent: "codex", error: { httpStatus: 429, retryAfter: "300" } }];
      if (attempt === 6 && i % 3 === 0) events.push({ threadId: id, type: "progress", turnId: "t1" });
      posts.push(send(request, events));
    }
  }
  await Promise.all(posts);
  await expect.poll(async () => {
    const { shown, served } = await shownAndServed(page, ids);
    return shown.length === ids.length && JSON.stringify(shown) === JSON.stringify(served);
  }).toBe(true);
});

test("changes whose notices were lost show after the stream reconnects", async ({ page, request }) => {
  // Every EventSource the page listens to is kept, and its `threads` notices can be held back.
  await page.addInitScript(() => {
    const w = window as unknown as { __radarSources: EventSource[]; __radarDropNotices: boolean };
    w.__radarSources = [];
    w.__radarDropNotices = false;
    const add = EventSource.prototype.addEventListener;
    EventSource.prototype.addEventListener = function (this: EventSource, type: string, listener: EventListenerOrEventListenerObject, options?: boolean | AddEventListenerOptions) {
      if (!w.__radarSources.includes(this)) w.__radarSources.push(this);
      const held: EventListener = (event) => {
        if (w.__radarDropNotices) return;
        if (typeof listener === "function") listener.call(this, event);
        else listener.handleEvent(event);
      };
      add.call(this, type, type === "threads" ? held : listener, options);
    } as typeof EventSource.prototype.addEventListener;
  });
  const id = uid("live-lost");
  await send(request, [{ threadId: id, type: "retry", turnId: "t1", attempt: 1, maxAttempts: 5, agent: "codex", error: { httpStatus: 429, retryAfter: "120" } }]);
  await page.goto("/");
  await expect(page.getByTestId("live-indicator")).toHaveAttribute("data-status", "live");
  const threadRow = row(page, id);
  await expect(threadRow.getByTestId("retry-attempt")).toHaveText("Retrying 1/5");

  await page.evaluate(() => ((window as unknown as { __radarDropNotices: boolean }).__radarDropNotices = true));
  const lost = uid("live-lost-new");
  await send(request, [
    { threadId: id, type: "retry", turnId: "t1", attempt: 2, maxAttempts: 5, error: { httpStatus: 429, retryAfter: "120" } },
    { threadId: lost, type: "retry", turnId: "t1", attempt: 1, maxAttempts: 5, agent: "codex", error: { httpStatus: 429, retryAfter: "120" } },
  ]);
  // Those notices went nowhere: the board still shows what it did.
  await expect(threadRow.getByTestId("retry-attempt")).toHaveText("Retrying 1/5");
  await expect(row(page, lost)).toHaveCount(0);

  // The stream comes back: a reconnect begins with `hello`, and everything live is read again.
  await page.evaluate(() => {
    const w = window as unknown as { __radarSources: EventSource[]; __radarDropNotices: boolean };
    w.__radarDropNotices = false;
    const source = w.__radarSources.at(-1)!;
    source.dispatchEvent(new MessageEvent("hello", { data: JSON.stringify({ serverTime: new Date().toISOString() }) }));
  });
  await expect(threadRow.getByTestId("retry-attempt")).toHaveText("Retrying 2/5");
  await expect(row(page, lost).getByTestId("retry-attempt")).toHaveText("Retrying 1/5");
});
