import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseExportQuery } from "@/lib/insights/range";
import type { ExportKind, ExportRow } from "@/lib/insights/stream";
import type { DatabaseHandles } from "./client";
import { EXPORT_COLUMNS, exportPages, threadExportRow, timelinePages } from "./exports";
import { M, NOW, openSeeded, RANGE, T0 } from "./fixture";

let handles: DatabaseHandles;
let close: () => Promise<void>;

beforeAll(() => {
  ({ handles, close } = openSeeded());
});

afterAll(() => close());

async function collect<T>(pages: AsyncIterable<T[]>): Promise<T[][]> {
  const out: T[][] = [];
  for await (const page of pages) out.push(page);
  return out;
}

describe("exports", () => {
  async function rows(kind: ExportKind, search: string, pageSize = 2): Promise<ExportRow[]> {
    const parsed = parseExportQuery(new URLSearchParams(search), NOW);
    if (!parsed.ok) throw new Error(parsed.error);
    return (await collect(exportPages(kind, parsed.query, NOW, handles.sql, pageSize))).flat();
  }

  it.each([
    ["threads", "", ["th-1", "th-2", "th-3", "th-4"]],
    ["threads", RANGE, ["th-1", "th-2", "th-3"]],
    ["threads", "provider=openai", ["th-1", "th-2"]],
    ["threads", "status=stalled", ["th-2"]],
    ["threads", `from=${new Date(T0 + 5 * M).toISOString()}&to=${new Date(T0 + 11 * M).toISOString()}`, ["th-2", "th-3"]],
    ["episodes", "", ["th-1#1", "th-2#1", "th-3#1", "th-1#2"]],
    ["episodes", "kind=capacity", ["th-2#1", "th-1#2"]],
    ["episodes", `from=${new Date(T0 + 4 * M).toISOString()}&to=${new Date(T0 + 16 * M).toISOString()}`, ["th-2#1", "th-3#1", "th-1#2"]],
    ["attempts", RANGE, ["th-1#1.1", "th-2#1.1", "th-1#1.2", "th-3#1.1", "th-3#1.2", "th-2#1.2"]],
    ["attempts", "source=claude@ci", ["th-3#1.1", "th-3#1.2"]],
  ] as const)("%s ?%s, across pages", async (kind, search, ids) => {
    const id = (row: ExportRow) => `${row.threadId}${row.episodeSeq ? `#${row.episodeSeq}` : ""}${row.n ? `.${row.n}` : ""}`;
    expect((await rows(kind, search)).map(id)).toEqual(ids);
  });

  it.each(["threads", "episodes", "attempts"] as const)("%s rows carry exactly the documented columns", async (kind) => {
    for (const row of await rows(kind, "")) expect(Object.keys(row).sort()).toEqual([...EXPORT_COLUMNS[kind]].sort());
  });

  it("presents times as ISO, flags as booleans and derives gaps and waits", async () => {
    const [first] = await rows("attempts", RANGE);
    expect(first).toMatchObject({
      noticeAt: new Date(T0 + M).toISOString(),
      startedAt: new Date(T0 + M + 230).toISOString(),
      retriedAt: new Date(T0 + M + 230).toISOString(),
      estimated: false,
      advisedDelayMs: 2_000,
      actualGapMs: 230,
      earlyByMs: 1_770,
      waitMs: 230,
    });
    expect((await rows("attempts", RANGE))[1]).toMatchObject({ startedAt: null, retriedAt: new Date(T0 + 10 * M).toISOString(), actualGapMs: 9 * M, waitMs: 9 * M });
    const episodes = await rows("episodes", RANGE);
    expect(episodes.map((e) => e.timeLostMs)).toEqual([2_230, 59 * M, 90_400, 0]);
    expect(episodes.map((e) => e.attempts)).toEqual([2, 2, 2, 0]);
  });

  it("a thread's timeline: episodes, attempts and events in one time order", async () => {
    const timeline = (await collect(timelinePages(1, handles.sql, 3))).flat();
    expect(timeline.map((r) => `${r.record}:${r.type ?? r.outcome ?? r.n}`)).toEqual([
      "event:retry",
      "episode:recovered",
      "attempt:1",
      "event:retry",
      "event:attempt",
      "attempt:2",
      "event:retry",
      "event:progress",
      "episode:failed",
    ]);
    expect(timeline[0].raw).toEqual({ type: "retry", n: 1 });
    expect(await threadExportRow(2, NOW, handles.sql)).toMatchObject({ threadId: "th-2", status: "stalled", source: "codex@build-7" });
  });
});
