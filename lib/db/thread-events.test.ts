import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

/**
 * The thread page at any size: the detail carries one page of events without payloads, pages go
 * back through the (threadId, at) index, and one event's payload is read on its own.
 */
process.env.DATABASE_URL = `file:${path.join(fs.mkdtempSync(path.join(os.tmpdir(), "radar-events-")), "radar.db")}`;

type Modules = {
  events: typeof import("./events");
  threads: typeof import("./threads");
  client: typeof import("./client");
  pipeline: typeof import("@/lib/server/pipeline");
  tokens: typeof import("@/lib/server/tokens");
};
let m: Modules;
let sourceId: string;
beforeAll(async () => {
  m = {
    events: await import("./events"),
    threads: await import("./threads"),
    client: await import("./client"),
    pipeline: await import("@/lib/server/pipeline"),
    tokens: await import("@/lib/server/tokens"),
  };
  sourceId = (await m.tokens.createSource("pages", `rr_pages_${Date.now()}`)).id;
});

const T0 = Date.now() - 3_600_000;

/** A thread with `count` progress events one second apart (written directly: 100k through the pipeline would take long). */
async function threadWith(externalId: string, count: number): Promise<number> {
  const source = { id: sourceId, name: "pages", policy: null, capacityRecovery: false } as Parameters<typeof m.pipeline.ingestLines>[0];
  await m.pipeline.ingestLines(source, [
    { index: 0, event: { type: "turn.started", at: T0, threadId: externalId, turnId: "u1" }, nativeType: null, format: "canonical", idempotencyKey: `${externalId}-start`, raw: { n: 0 }, receivedAt: T0 },
  ], T0);
  const { sql } = m.client.db();
  const key = sql.prepare(`SELECT id FROM "Thread" WHERE sourceId = ? AND externalId = ?`).pluck().get(sourceId, externalId) as number;
  const insert = sql.prepare(`INSERT INTO "Event" (sourceId, threadId, idempotencyKey, format, type, at, receivedAt, count, late, raw, normalized)
    VALUES (?, ?, ?, 'canonical', 'progress', ?, ?, 1, 0, ?, '{}')`);
  sql.transaction(() => {
    for (let n = 1; n < count; n++) insert.run(sourceId, key, `${externalId}-${n}`, T0 + n * 1000, T0 + n * 1000, JSON.stringify({ n, pad: "x".repeat(100) }));
  })();
  return key;
}

describe("a thread's events", () => {
  it("come a page at a time, newest first, every event exactly once across the pages", async () => {
    const key = await threadWith("paged", 250);
    const seen: number[] = [];
    let before: number | null = null;
    let pages = 0;
    do {
      const page: Awaited<ReturnType<typeof m.events.threadEventPage>> = await m.events.threadEventPage(key, { before, limit: 100 });
      expect(page.events.every((event) => event.raw === undefined)).toBe(true);
      seen.push(...page.events.map((event) => Date.parse(event.at)));
      before = page.earlier;
      pages++;
    } while (before != null);
    expect(pages).toBe(3);
    expect(seen).toHaveLength(250);
    expect(seen).toEqual([...seen].sort((a, b) => b - a));
    expect(new Set(seen).size).toBe(250);
    const withRaw = await m.events.threadEventPage(key, { limit: 2, raw: true });
    expect(withRaw.events[0].raw).toMatchObject({ n: 249 });
    expect(await m.events.eventRaw(key, withRaw.events[1].seq)).toMatchObject({ n: 248 });
    expect(await m.events.eventRaw(key + 1_000_000, withRaw.events[1].seq)).toBeUndefined();
  });

  it("a thread with 100k events opens with the same detail as one with a few hundred", async () => {
    const small = await threadWith("small", 200);
    const large = await threadWith("large", 100_000);
    const size = async (key: number) => {
      const detail = (await m.threads.threadDetail(key))!;
      expect(detail.events).toHaveLength(100);
      expect(detail.earlierEvents).not.toBeNull();
      expect(detail.events.every((event) => event.raw === undefined)).toBe(true);
      return JSON.stringify({ ...detail, thread: null, state: null }).length;
    };
    const smallSize = await size(small);
    const largeSize = await size(large);
    // Only the digits of larger sequence numbers and times differ.
    expect(largeSize).toBeLessThan(smallSize * 1.05);
  });

  it("reads pages through the (threadId, at) index, never sorting the thread's events", async () => {
    const { sql } = m.client.db();
    for (const text of [m.events.EVENT_PAGE_SQL.newest, m.events.EVENT_PAGE_SQL.before]) {
      const plan = (sql.prepare(`EXPLAIN QUERY PLAN ${text}`).all({ thread: 1, before: 1, limit: 101 }) as { detail: string }[]).map((row) => row.detail).join("\n");
      expect(plan).toMatch(/USING (COVERING )?INDEX "?Event_threadId_at_idx/);
      expect(plan).not.toMatch(/TEMP B-TREE/);
    }
  });
});
