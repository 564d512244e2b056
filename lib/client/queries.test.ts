import { QueryClient, QueryObserver } from "@tanstack/react-query";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { StreamThreads, ThreadBoard, ThreadView } from "@/lib/wire/types";
import { applyThreadChanges, boardQuery, queryKeys } from "./queries";

/**
 * The browser's half of the live-update protocol: an unfiltered board puts the rows a notice
 * carries in place without a request; a filtered board, or a notice without rows, reads them by
 * key with the board's filter.
 */
const row = (key: number, status: string, attempt: number): ThreadView =>
  ({ key, id: `th-${key}`, status, updatedAt: new Date(1_000 + attempt).toISOString(), retry: { attempt } }) as ThreadView;

const board = (threads: ThreadView[]): ThreadBoard => ({ threads, total: threads.length, page: 1, pageSize: 50, counts: {}, stoppable: 0, serverTime: new Date(0).toISOString() });

/** A query client showing a board of `queryString` (an active query, as a mounted board is). */
function showing(queryString: string, threads: ThreadView[]) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { staleTime: Infinity, retry: false } } });
  queryClient.setQueryData(queryKeys.board(queryString), board(threads));
  const observer = new QueryObserver(queryClient, { queryKey: queryKeys.board(queryString), queryFn: () => queryClient.getQueryData(queryKeys.board(queryString))!, staleTime: Infinity });
  const unsubscribe = observer.subscribe(() => {});
  return { queryClient, shown: () => queryClient.getQueryData<ThreadBoard>(queryKeys.board(queryString))!.threads, unsubscribe };
}

const requests: string[] = [];
function answering(rows: ThreadView[]) {
  vi.stubGlobal("fetch", async (url: string) => {
    requests.push(url);
    return Response.json({ threads: rows, serverTime: new Date(5).toISOString() });
  });
}
afterEach(() => {
  requests.length = 0;
  vi.unstubAllGlobals();
});

describe("applyThreadChanges", () => {
  const notice = (rows?: ThreadView[]): StreamThreads => ({ threads: [{ key: 1, reorder: false }], rows, serverTime: new Date(3).toISOString() });

  it("puts the rows a notice carries in place on an unfiltered board, with no request", async () => {
    answering([]);
    const { queryClient, shown, unsubscribe } = showing("", [row(1, "retrying", 1), row(2, "running", 0)]);
    await applyThreadChanges(queryClient, notice([row(1, "retrying", 2)]));
    expect(shown().map((thread) => thread.retry?.attempt)).toEqual([2, 0]);
    expect(requests.filter((url) => url.includes("keys="))).toEqual([]);
    unsubscribe();
  });

  it("removes a row the notice names without a row: it left the unfiltered board", async () => {
    answering([]);
    const { queryClient, shown, unsubscribe } = showing("page=1", [row(1, "retrying", 1), row(2, "running", 0)]);
    await applyThreadChanges(queryClient, notice([]));
    expect(shown().map((thread) => thread.key)).toEqual([2]);
    unsubscribe();
  });

  it("reads the rows by key with its filter on a filtered board, or when the notice carries none", async () => {
    for (const [queryString, rows] of [["provider=openai", [row(1, "retrying", 2)]], ["", undefined]] as const) {
      answering([row(1, "retrying", 2)]);
      const { queryClient, shown, unsubscribe } = showing(queryString, [row(1, "retrying", 1)]);
      await applyThreadChanges(queryClient, notice(rows && [...rows]));
      expect(shown()[0].retry?.attempt).toBe(2);
      const read = new URL(requests.find((url) => url.includes("keys="))!, "http://radar.test").searchParams;
      expect([read.get("keys"), read.get("matching"), read.get("provider")]).toEqual(["1", "1", queryString ? "openai" : null]);
      unsubscribe();
      requests.length = 0;
    }
  });

  it("never puts back an older row: a row read answered after a newer notice's rows is not applied", async () => {
    // Row reads answered in turn, each when the test says so.
    const answers: { serverTime: number; rows: ThreadView[]; release: () => void; released: Promise<void> }[] = [
      { serverTime: 4, rows: [row(1, "retrying", 2)] },
      { serverTime: 7, rows: [row(1, "retrying", 3)] },
    ].map((answer) => {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      return { ...answer, release, released };
    });
    let asked = 0;
    vi.stubGlobal("fetch", async (url: string) => {
      requests.push(url);
      const answer = answers[asked++];
      await answer.released;
      return Response.json({ threads: answer.rows, serverTime: new Date(answer.serverTime).toISOString() });
    });
    const { queryClient, shown, unsubscribe } = showing("", [row(1, "retrying", 1)]);
    const seen: number[] = [];
    const stop = queryClient.getQueryCache().subscribe(() => {
      const attempt = shown()[0]?.retry?.attempt;
      if (attempt != null && seen.at(-1) !== attempt) seen.push(attempt);
    });
    // A burst's notice, keys only: its rows are read by key (answered late, read at 4)…
    const burst = applyThreadChanges(queryClient, { threads: [{ key: 1, reorder: false }], serverTime: new Date(3).toISOString() });
    // …while the next notice carries newer rows (6), put in place at once.
    await applyThreadChanges(queryClient, { threads: [{ key: 1, reorder: false }], rows: [row(1, "retrying", 3)], serverTime: new Date(6).toISOString() });
    expect(shown()[0].retry?.attempt).toBe(3);
    answers[0].release();
    answers[1].release();
    await burst;
    stop();
    expect(seen).toEqual([3]);
    expect(shown()[0].retry?.attempt).toBe(3);
    unsubscribe();
  });

  it("reads the page again when more rows changed during a page read than are remembered to apply again", async () => {
    // The first page read is answered late, with what it read before the changes; later ones now.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let pageReads = 0;
    vi.stubGlobal("fetch", async (url: string) => {
      requests.push(url);
      if (++pageReads === 1) {
        await released;
        return Response.json(board(fleet(1)));
      }
      return Response.json(board([row(1, "retrying", 2), ...fleet(1).slice(1)]));
    });
    // A board of 25 threads, each at its first attempt.
    const fleet = (attempt: number) => Array.from({ length: 25 }, (_, index) => row(index + 1, "retrying", attempt));
    const { queryClient, shown, unsubscribe } = showing("", fleet(1));
    const page = queryClient.fetchQuery({ ...boardQuery(""), staleTime: 0 });
    // Thread 1 changes first, then 24 others, each in a notice of its own, while the page is read.
    await applyThreadChanges(queryClient, { threads: [{ key: 1, reorder: false }], rows: [row(1, "retrying", 2)], serverTime: new Date(1).toISOString() });
    for (let key = 2; key <= 25; key++) {
      await applyThreadChanges(queryClient, { threads: [{ key, reorder: false }], rows: [row(key, "retrying", 1)], serverTime: new Date(1).toISOString() });
    }
    release();
    await page;
    await vi.waitFor(() => expect(shown()[0].retry?.attempt).toBe(2));
    expect(requests).toHaveLength(2);
    unsubscribe();
  });

  describe("behind a balancer, instances whose clocks disagree", () => {
    // Instance A's clock runs a minute ahead of B's; the browser's requests reach A, then B.
    const AHEAD = 60_000;
    const keysOnly: StreamThreads = { threads: [{ key: 1, reorder: false }], serverTime: new Date(AHEAD).toISOString() };
    function instances(answers: { serverTime: number; rows: ThreadView[] }[]) {
      let asked = 0;
      vi.stubGlobal("fetch", async (url: string) => {
        requests.push(url);
        const { serverTime, rows } = answers[asked++];
        const at = new Date(serverTime).toISOString();
        return Response.json(url.includes("keys=") ? { threads: rows, serverTime: at } : { ...board(rows), serverTime: at });
      });
    }

    /** A filtered board whose first row read (attempt 2) is answered by A; the next read, by B, brings attempt 3. */
    async function afterARowReadOnA() {
      instances([
        { serverTime: AHEAD + 10, rows: [row(1, "retrying", 2)] },
        { serverTime: 20, rows: [row(1, "retrying", 3)] },
      ]);
      const shown = showing("provider=openai", [row(1, "retrying", 1)]);
      await applyThreadChanges(shown.queryClient, keysOnly);
      expect(shown.shown()[0].retry?.attempt).toBe(2);
      return shown;
    }

    it("a newer row read on the slower clock is applied, not dropped", async () => {
      const { queryClient, shown, unsubscribe } = await afterARowReadOnA();
      await applyThreadChanges(queryClient, keysOnly);
      expect(shown()[0].retry?.attempt).toBe(3);
      unsubscribe();
    });

    it("a page read sent after a row read keeps its newer row, whatever the clocks say", async () => {
      const { queryClient, shown, unsubscribe } = await afterARowReadOnA();
      // The board's own refetch (a page read), answered by B: the row read on A is older.
      await queryClient.fetchQuery({ ...boardQuery("provider=openai"), staleTime: 0 });
      expect(shown()[0].retry?.attempt).toBe(3);
      unsubscribe();
    });
  });
});
