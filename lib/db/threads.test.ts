import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shared } from "@/lib/process-state";
import { ATTENTION_STATUSES, STOPPABLE_STATUSES } from "@/lib/threads/statuses";
import type { DatabaseHandles } from "./client";
import { NOW, openSeeded } from "./fixture";
import { isStalledRow, type ThreadFilter } from "./thread-filter";
import { threadBoard, threadRows } from "./threads";
import { boardOrder } from "@/lib/client/board-rows";

/** The board's counts, totals and pages against the same figures worked out row by row (fixture.ts). */

let handles: DatabaseHandles;
let close: () => Promise<void>;
const global = shared<{ db?: DatabaseHandles }>("db", () => ({}));

beforeAll(() => {
  ({ handles, close } = openSeeded());
  global.db = handles;
});

afterAll(async () => {
  delete global.db;
  await close();
});

const cases: [string, ThreadFilter][] = [
  ["nothing", {}],
  ["stalled", { status: ["stalled"] }],
  ["retrying (not stalled)", { status: ["retrying"] }],
  ["two statuses", { status: ["recovered", "exhausted"] }],
  ["a status nobody can stop", { status: ["completed"] }],
  ["provider", { provider: ["openai"] }],
  ["source by name", { source: ["claude@ci"] }],
  ["text", { q: "th-" }],
  ["combined", { provider: ["openai"], status: ["stalled", "recovered"], q: "th-" }],
];

describe("threadBoard", () => {
  it.each(cases)("%s", async (_name, filter) => {
    const all = await handles.prisma.thread.findMany({ orderBy: [{ updatedAt: "desc" }, { id: "desc" }], include: { source: true } });
    const view = (row: (typeof all)[number]) => (isStalledRow(row, NOW) ? "stalled" : row.status);
    const { status, ...rest } = filter;
    const matchesRest = (row: (typeof all)[number]) =>
      (!rest.provider || rest.provider.includes(row.provider ?? "")) &&
      (!rest.source || rest.source.includes(row.source.name) || rest.source.includes(row.sourceId)) &&
      (!rest.q || [row.externalId, row.title, row.lastErrorMessage, row.agent, row.model].some((v) => v?.toLowerCase().includes(rest.q!.toLowerCase())));
    const unfiltered = all.filter(matchesRest);
    const counts: Record<string, number> = {};
    for (const row of unfiltered) counts[view(row)] = (counts[view(row)] ?? 0) + 1;
    const matching = unfiltered.filter((row) => !status?.length || status.includes(view(row)));
    const attentionFirst = [...matching.filter((row) => ATTENTION_STATUSES.includes(row.status)), ...matching.filter((row) => !ATTENTION_STATUSES.includes(row.status))];

    for (const pageSize of [2, 50]) {
      const board = await threadBoard(filter, { page: 2, pageSize, attentionFirst: true }, NOW);
      expect(board.counts).toEqual(counts);
      expect(board.total).toBe(matching.length);
      expect(board.stoppable).toBe(matching.filter((row) => STOPPABLE_STATUSES.includes(view(row))).length);
      expect(board.threads.map((t) => t.key)).toEqual(attentionFirst.slice(pageSize, 2 * pageSize).map((row) => row.id));
      const plain = await threadBoard(filter, { page: 1, pageSize }, NOW);
      expect(plain.threads.map((t) => t.key)).toEqual(matching.slice(0, pageSize).map((row) => row.id));
    }
  });
});

describe("the board's order in the browser", () => {
  it("is the order the server pages in, so rows read by key land where the page puts them", async () => {
    const board = await threadBoard({ archived: "show" }, { pageSize: 500, attentionFirst: true }, NOW);
    expect(board.threads.length).toBeGreaterThan(1);
    expect(board.threads.toSorted(boardOrder).map((t) => t.key)).toEqual(board.threads.map((t) => t.key));
  });

  it("rows read with a board's filter are those of the board", async () => {
    const filter: ThreadFilter = { provider: ["openai"] };
    const board = await threadBoard(filter, { pageSize: 500, attentionFirst: true }, NOW);
    const all = (await handles.prisma.thread.findMany({ select: { id: true } })).map((row) => row.id);
    const rows = await threadRows(all, NOW, filter);
    expect(rows.map((t) => t.key).toSorted()).toEqual(board.threads.map((t) => t.key).toSorted());
    expect((await threadRows(all, NOW)).length).toBe(all.length);
  });
});
