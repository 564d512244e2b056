import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandles } from "./client";
import { NOW, openSeeded } from "./fixture";
import { isStalledRow, recordFilterSql, stalledSql, stalledWhere, threadFilterSql, threadWhere, type ThreadFilter } from "./thread-filter";

/** Each rule of thread-filter.ts in its two forms, run over the same rows (fixture.ts). */

let handles: DatabaseHandles;
let close: () => Promise<void>;

beforeAll(() => {
  ({ handles, close } = openSeeded());
});

afterAll(() => close());

describe("the SQL thread filter selects what the board's Prisma filter selects", () => {
  const cases: [string, Omit<ThreadFilter, "from" | "to">][] = [
    ["nothing", {}],
    ["stalled", { status: ["stalled"] }],
    ["retrying (not stalled)", { status: ["retrying"] }],
    ["two statuses", { status: ["recovered", "exhausted"] }],
    ["kind (thread's retry or last error)", { kind: ["rate_limit"] }],
    ["provider", { provider: ["openai"] }],
    ["model", { model: ["gpt-5", "claude-opus"] }],
    ["source by name", { source: ["claude@ci"] }],
    ["source by id", { source: ["src-codex"] }],
    ["text, any case", { q: "DOCS" }],
    ["text in an error", { q: "too many" }],
    ["text with a LIKE wildcard", { q: "a_b" }],
    ["combined", { provider: ["openai"], status: ["stalled", "recovered"], q: "th-" }],
  ];
  it.each(cases)("%s", async (_name, filter) => {
    const expected = (await handles.prisma.thread.findMany({ where: threadWhere(filter, NOW), select: { id: true }, orderBy: { id: "asc" } })).map((r) => r.id);
    const clause = threadFilterSql(filter, NOW);
    const actual = handles.sql.prepare(`SELECT t.id FROM "Thread" t WHERE ${clause.sql} ORDER BY t.id`).pluck().all(...clause.params);
    expect(actual).toEqual(expected);
  });
});

describe("archive and snooze hide threads from the board, not from what is counted and exported", () => {
  it("the board's filter drops an archived and a snoozed thread; the record's filter keeps them", () => {
    const ids = handles.sql.prepare(`SELECT id FROM "Thread" ORDER BY id LIMIT 2`).pluck().all() as number[];
    handles.sql.prepare(`UPDATE "Thread" SET archivedAt = ? WHERE id = ?`).run(NOW, ids[0]);
    handles.sql.prepare(`UPDATE "Thread" SET snoozedUntil = ? WHERE id = ?`).run(NOW + 60_000, ids[1]);
    try {
      const select = (clause: { sql: string; params: unknown[] }) =>
        handles.sql.prepare(`SELECT t.id FROM "Thread" t WHERE ${clause.sql} ORDER BY t.id`).pluck().all(...clause.params) as number[];
      const all = handles.sql.prepare(`SELECT id FROM "Thread" WHERE joinedTo IS NULL ORDER BY id`).pluck().all() as number[];
      expect(select(threadFilterSql({}, NOW))).toEqual(all.filter((id) => !ids.includes(id)));
      expect(select(recordFilterSql({}, NOW))).toEqual(all);
      expect(select(recordFilterSql({ archived: "only" }, NOW))).toEqual(ids);
    } finally {
      handles.sql.prepare(`UPDATE "Thread" SET archivedAt = NULL, snoozedUntil = NULL WHERE id IN (?, ?)`).run(...ids);
    }
  });
});

describe("the stalled rule reads the same in every form", () => {
  it.each([NOW - 120_000, NOW, NOW + 120_000])("at %i", async (now) => {
    const prisma = (await handles.prisma.thread.findMany({ where: stalledWhere(now), select: { id: true }, orderBy: { id: "asc" } })).map((r) => r.id);
    const sql = handles.sql.prepare(`SELECT t.id FROM "Thread" t WHERE ${stalledSql()} ORDER BY t.id`).pluck().all(now);
    const rows = (await handles.prisma.thread.findMany({ select: { id: true, status: true, deadlineAt: true }, orderBy: { id: "asc" } }))
      .filter((row) => isStalledRow(row, now))
      .map((row) => row.id);
    expect(sql).toEqual(prisma);
    expect(rows).toEqual(prisma);
  });
});
