import { describe, expect, it } from "vitest";
import type { ThreadBoard, ThreadView } from "@/lib/wire/types";
import { boardOrder, mergeBoardRows } from "./board-rows";

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
