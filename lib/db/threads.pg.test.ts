import { describe, expect, it } from "vitest";
import { STORES } from "@/e2e/support/both-stores";
import { MAX_STORED_TIME, MIN_STORED_TIME } from "@/lib/ingest/limits";
import { BUILT_AT, sameAnswer, useSeededStore } from "@/e2e/support/seeded-stores";
import { NOW } from "./fixture";
import { eventRaw, threadEventPage } from "./events";
import { openDirectivesForThreads } from "./directives";
import { listLimitWindows, windowsBlocking } from "./limits";
import type { ThreadFilter } from "./thread-filter";
import { filterOptions, stoppableThreadKeys, threadBoard, threadDetail, threadExists, threadRows, threadsByExternalId } from "./threads";

/**
 * The board, thread rows, the thread page and the usage windows answer the same on both stores
 * over the same radar (the insights fixture and the real clients' captures).
 */
const filters: [string, ThreadFilter][] = [
  ["nothing", {}],
  ["stalled", { status: ["stalled"] }],
  ["retrying (not stalled)", { status: ["retrying"] }],
  ["two statuses", { status: ["recovered", "exhausted", "failed"] }],
  ["kind", { kind: ["rate_limit", "usage_limit"] }],
  ["provider", { provider: ["openai"] }],
  ["model", { model: ["gpt-5", "claude-opus"] }],
  ["source by name", { source: ["claude@ci", "capture-1"] }],
  ["text, any case", { q: "TH-" }],
  ["text with a LIKE wildcard", { q: "a_b" }],
  ["updated in a range", { from: NOW - 150 * 60_000, to: NOW - 100 * 60_000 }],
  ["the widest range a query may name", { from: MIN_STORED_TIME, to: MAX_STORED_TIME }],
  ["archived shown", { archived: "show" }],
  ["combined", { provider: ["openai"], status: ["stalled", "recovered"], q: "th-" }],
];
const readAt = [NOW, BUILT_AT + 60_000];

describe.each(STORES)("thread reads on %s", (store) => {
  useSeededStore(store);

  it("the board: counts, totals and every page in both orders", async () => {
    const all = await threadBoard({}, { pageSize: 500 }, NOW);
    expect(all.total).toBeGreaterThan(6);
    for (const [name, filter] of filters) {
      for (const now of readAt) {
        for (const attentionFirst of [false, true]) {
          const first = await threadBoard(filter, { pageSize: 3, attentionFirst }, now);
          const pages = [first];
          for (let page = 2; page <= Math.ceil(first.total / 3) + 1; page++) pages.push(await threadBoard(filter, { page, pageSize: 3, attentionFirst }, now));
          expect(pages.flatMap((page) => page.threads)).toHaveLength(first.total);
          sameAnswer(store, `board ${name} at ${now}${attentionFirst ? " attention first" : ""}`, pages);
        }
      }
    }
  });

  it("thread rows by key, with and without the board's filter", async () => {
    const keys = (await threadBoard({}, { pageSize: 500 }, NOW)).threads.map((thread) => thread.key);
    for (const now of readAt) {
      sameAnswer(store, `rows at ${now}`, await threadRows([...keys, 9999], now));
      for (const [name, filter] of filters) sameAnswer(store, `rows ${name} at ${now}`, await threadRows(keys, now, filter));
    }
  });

  it("filter options, stoppable keys, threads by agent id, existence", async () => {
    sameAnswer(store, "filter options", await filterOptions());
    for (const [name, filter] of filters) sameAnswer(store, `stoppable ${name}`, await stoppableThreadKeys(filter, NOW));
    const byId = await threadsByExternalId("th-1");
    expect(byId).toHaveLength(1);
    sameAnswer(store, "by external id", byId.map(({ id, externalId, sourceId, source, updatedAt, nextAttemptEstimated }) => ({ id, externalId, sourceId, source, updatedAt, nextAttemptEstimated })));
    sameAnswer(store, "by external id and source", (await threadsByExternalId("th-3", "src-codex")).length);
    expect(await threadExists(1)).toBe(true);
    expect(await threadExists(9999)).toBe(false);
  });

  it("every thread's page: detail, earlier event pages with payloads, raw payloads", async () => {
    const keys = (await threadBoard({ archived: "show" }, { pageSize: 500 }, NOW)).threads.map((thread) => thread.key);
    for (const key of keys) {
      for (const now of readAt) sameAnswer(store, `detail ${key} at ${now}`, await threadDetail(key, now));
      const pages = [];
      let before: number | null = null;
      do {
        const page = await threadEventPage(key, { before, limit: 4, raw: true });
        pages.push(page);
        before = page.earlier;
      } while (before !== null);
      sameAnswer(store, `event pages ${key}`, pages);
      const seqs = pages.flatMap((page) => page.events.map((event) => event.seq));
      // A seq beyond 32 bits (Event ids are BIGINT on PostgreSQL) is a seq like any other on both.
      sameAnswer(store, `raw ${key}`, await Promise.all([...seqs.slice(0, 3), 999_999, 5_000_000_001].map((seq) => eventRaw(key, seq))));
      sameAnswer(store, `before a 64-bit seq ${key}`, await threadEventPage(key, { before: 5_000_000_001, limit: 4 }));
    }
    expect(await threadDetail(9999, NOW)).toBeNull();
    const episodes = await Promise.all(keys.map(async (key) => (await threadDetail(key, NOW))!.episodes.length));
    expect(episodes.filter((n) => n > 0).length).toBeGreaterThan(4);
  });

  it("usage windows and the threads they block", async () => {
    expect((await listLimitWindows(BUILT_AT)).windows.length).toBeGreaterThan(1);
    for (const now of [NOW, BUILT_AT - 86_400_000, BUILT_AT]) {
      const limits = await listLimitWindows(now);
      sameAnswer(store, `limits at ${now}`, limits);
      const keys = (await threadBoard({}, { pageSize: 500 }, now)).threads.map((thread) => thread.key);
      sameAnswer(store, `blocking at ${now}`, await Promise.all(keys.map((key) => windowsBlocking(key, now))));
    }
  });
});

describe.each(STORES)("directive reads on %s", (store) => {
  useSeededStore(store);

  it("open directives of a source's threads", async () => {
    for (const [source, threads] of [["src-codex", [1, 2]], ["src-claude", [3, 4]], ["src-codex", []]] as const) {
      sameAnswer(store, `open directives ${source} ${threads.join(",")}`, await openDirectivesForThreads(source, [...threads]));
    }
    expect(await openDirectivesForThreads("src-codex", [1, 2])).toHaveLength(1);
  });
});
