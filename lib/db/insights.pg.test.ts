import { describe, expect, it } from "vitest";
import { STORES } from "@/e2e/support/both-stores";
import { BUILT_AT, sameAnswer, useSeededStore } from "@/e2e/support/seeded-stores";
import { MAX_STORED_TIME, MIN_STORED_TIME } from "@/lib/ingest/limits";
import { parseExportQuery, parseInsightsQuery } from "@/lib/insights/range";
import type { ExportKind } from "@/lib/insights/stream";
import { read, exportBody } from "@/lib/server/off-thread";
import { listAudit } from "./audit";
import { threadExportRow } from "./exports";
import { M, NOW, T0 } from "./fixture";
import { threadBoard } from "./threads";

/**
 * A SQLite radar moved to PostgreSQL gives identical exports (threads, episodes, attempts,
 * timelines, audit) and the same insights numbers: both stores read the same radar (the insights
 * fixture and the real clients' captures) through the reads the API serves.
 */
const iso = (ms: number) => new Date(ms).toISOString();
const insightsQueries = [
  `from=${iso(T0)}&to=${iso(T0 + 60 * M)}`,
  `from=${iso(T0 - 30 * M)}&to=${iso(T0 + 150 * M)}`,
  `from=${iso(T0 + 90_000)}&to=${iso(T0 + 17 * M + 30_000)}&split=provider`,
  `from=${iso(T0)}&to=${iso(T0 + 60 * M)}&split=model&kind=capacity`,
  `from=${iso(T0)}&to=${iso(T0 + 60 * M)}&provider=openai&status=stalled,recovered`,
  `from=${iso(T0)}&to=${iso(T0 + 60 * M)}&q=th-`,
  `from=${iso(T0)}&to=${iso(T0 + 60 * M)}&source=claude@ci`,
  `from=${iso(BUILT_AT - 2 * 86_400_000)}&to=${iso(BUILT_AT + 3_600_000)}`,
  `from=${iso(BUILT_AT - 4 * 3_600_000)}&to=${iso(BUILT_AT)}&split=provider`,
  `from=${iso(T0 - 86_400_000)}&to=${iso(BUILT_AT + 86_400_000)}&split=model`,
  "range=24h",
  "range=7d",
];
const exportQueries = ["", `from=${iso(T0)}&to=${iso(T0 + 60 * M)}`, "provider=openai", "status=stalled", "kind=capacity", "source=claude@ci", "q=TH-"];

async function text(body: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(body).text();
}

describe.each(STORES)("insights and exports on %s", (store) => {
  useSeededStore(store);

  it("insights: every chart and total, for several ranges, bucket sizes, splits and filters", async () => {
    let notices = 0;
    for (const search of insightsQueries) {
      for (const now of [NOW, BUILT_AT + 60_000]) {
        const parsed = parseInsightsQuery(new URLSearchParams(search), now);
        if (!parsed.ok) throw new Error(parsed.error);
        const data = await read("insights", parsed.query, now);
        notices += data.totals.notices;
        sameAnswer(store, `insights ${search} at ${now}`, data);
      }
    }
    expect(notices).toBeGreaterThan(10);
  });

  it("exports of threads, episodes and attempts: every row, JSON, CSV and NDJSON", async () => {
    for (const kind of ["threads", "episodes", "attempts"] as ExportKind[]) {
      for (const search of exportQueries) {
        const parsed = parseExportQuery(new URLSearchParams(search), NOW);
        if (!parsed.ok) throw new Error(parsed.error);
        for (const format of ["json", "csv", "ndjson"] as const) {
          const body = await text(exportBody("facts", { format, kind, query: parsed.query, now: NOW }));
          sameAnswer(store, `export ${kind} ${format} ?${search}`, body);
        }
      }
    }
  });

  it("every thread's timeline export", async () => {
    const keys = (await threadBoard({ archived: "show" }, { pageSize: 500 }, NOW)).threads.map((thread) => thread.key);
    let lines = 0;
    for (const key of keys) {
      const thread = await threadExportRow(key, NOW);
      expect(thread).not.toBeNull();
      const body = await text(exportBody("timeline", { format: "ndjson", key, thread: thread! }));
      lines += body.split("\n").length;
      sameAnswer(store, `timeline ${key}`, body);
    }
    expect(lines).toBeGreaterThan(100);
    expect(await threadExportRow(9999, NOW)).toBeNull();
  });

  it("the audit log: its page and its export", async () => {
    for (const filter of [{}, { actor: "ada@example.com" }, { q: "th-" }, { q: "LUNCH" }, { from: T0 + 1, to: T0 + 2 * M }, { from: MIN_STORED_TIME, to: MAX_STORED_TIME }, { action: "stop", pageSize: 1, page: 1 }]) {
      sameAnswer(store, `audit ${JSON.stringify(filter)}`, await listAudit(filter));
      for (const format of ["json", "csv"] as const) sameAnswer(store, `audit export ${format} ${JSON.stringify(filter)}`, await text(exportBody("audit", { format, filter })));
    }
    expect((await listAudit({})).total).toBe(3);
  });
});
