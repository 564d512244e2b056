import { describe, expect, it } from "vitest";
import type { ThreadBoard, ThreadView } from "@/lib/wire/types";
import { boardOrder, mergeBoardRows, newerPart, type RowOrders } from "./board-rows";

const row = (key: number, status: string, updatedAt: number): ThreadView =>
  ({ key, id: `th-${key}`, status, updatedAt: new Date(updatedAt).toISOString() }) as ThreadView;

const board = (threads: ThreadView[], page = 1, pageSize = 3, total = threads.length): ThreadBoard => ({
  threads,
  total,
  page,
  pageSize,
  counts: {},
  stoppable: 0,
  serverTime: new Date(0).toISOString(),
});

const keys = (b: ThreadBoard) => b.threads.map((thread) => thread.key);
const read = (asked: number[], fresh: ThreadView[], reorder: boolean) => ({ asked, fresh, reorder, serverTime: new Date(1).toISOString() });

describe("boardOrder", () => {
  it("puts attention first, then newest, then the higher key", () => {
    const rows = [row(1, "running", 30), row(2, "retrying", 10), row(3, "exhausted", 10), row(4, "completed", 30)];
    expect(rows.toSorted(boardOrder).map((r) => r.key)).toEqual([3, 2, 4, 1]);
  });
});

describe("mergeBoardRows", () => {
  const shown = board([row(1, "retrying", 20), row(2, "running", 30), row(3, "running", 10)], 1, 3, 5);

  it("replaces a changed row in place when nothing may move", () => {
    const merged = mergeBoardRows(shown, read([3], [row(3, "running", 40)], false));
    expect(keys(merged)).toEqual([1, 2, 3]);
    expect(merged.threads[2].updatedAt).toBe(new Date(40).toISOString());
    expect(merged.total).toBe(5);
  });

  it("brings a new row onto the first page where it sorts, pushing the last off", () => {
    const merged = mergeBoardRows(shown, read([9], [row(9, "retrying", 5)], true));
    expect(keys(merged)).toEqual([1, 9, 2]);
    expect(merged.total).toBe(6);
  });

  it("leaves out a new row that sorts after a full first page", () => {
    expect(keys(mergeBoardRows(shown, read([9], [row(9, "running", 1)], true)))).toEqual([1, 2, 3]);
  });

  it("removes a row that left the filter, and moves one whose status changed", () => {
    const merged = mergeBoardRows(shown, read([1, 3], [row(3, "exhausted", 50)], true));
    expect(keys(merged)).toEqual([3, 2]);
    expect(merged.total).toBe(4);
  });

  it("places no new row on a later page (the page read brings it)", () => {
    expect(keys(mergeBoardRows({ ...shown, page: 2 }, read([9], [row(9, "retrying", 50)], true)))).toEqual([1, 2, 3]);
  });

  it("returns the same board when nothing changed", () => {
    expect(mergeBoardRows(shown, read([2], [shown.threads[1]], false))).toBe(shown);
  });
});

describe("newerPart", () => {
  const at = (ms: number) => new Date(ms).toISOString();
  /** A read at `order` in this browser's order of reads, answered by a server whose clock said `serverTime`. */
  const rowsRead = (asked: number[], order: number, serverTime = order) => ({ asked, fresh: asked.map((key) => row(key, "running", serverTime)), reorder: false, serverTime: at(serverTime), order });

  it("leaves out the keys a newer read brought, and records the read's order for the others", () => {
    const orders: RowOrders = { page: 2, rows: new Map([[1, 9]]) };
    const news = newerPart(rowsRead([1, 2], 5), orders);
    expect(news.asked).toEqual([2]);
    expect(news.fresh.map((thread) => thread.key)).toEqual([2]);
    expect(orders.rows.get(2)).toBe(5);
    expect(orders.rows.get(1)).toBe(9);
  });

  it("leaves out every key when the page read is newer than the row read", () => {
    expect(newerPart(rowsRead([1, 2], 5), { page: 6, rows: new Map() }).asked).toEqual([]);
  });

  it("keeps a read as it is when it is the newest", () => {
    const read = rowsRead([1], 5);
    expect(newerPart(read, { page: 2, rows: new Map([[1, 4]]) })).toBe(read);
  });

  it("two instances whose clocks disagree: the newer read wins whatever their clocks say", () => {
    // Instance A's clock runs a minute ahead of B's; the browser reads row 1 on A, then on B.
    const orders: RowOrders = { page: 0, rows: new Map() };
    const onA = rowsRead([1], 1, 60_000 + 10);
    const onB = rowsRead([1], 2, 20);
    expect(newerPart(onA, orders)).toBe(onA);
    // B's answer is newer although its clock says earlier: it is applied, not dropped.
    expect(newerPart(onB, orders)).toBe(onB);
    expect(orders.rows.get(1)).toBe(2);
    // And A's answer, had it come last, is the older one whatever its clock says.
    const late = { page: 0, rows: new Map([[1, 2]]) };
    expect(newerPart(onA, late).asked).toEqual([]);
  });
});

describe("mergeBoardRows keeps the board's newest time", () => {
  it("an older read applied late does not make the board older", () => {
    const newer = { ...board([row(1, "running", 10)]), serverTime: new Date(50).toISOString() };
    const merged = mergeBoardRows(newer, { asked: [1], fresh: [row(1, "running", 11)], reorder: false, serverTime: new Date(20).toISOString() });
    expect(merged.threads[0].updatedAt).toBe(new Date(11).toISOString());
    expect(merged.serverTime).toBe(new Date(50).toISOString());
  });
});
