import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

/**
 * Quotas, retention and a full disk in process, on a real SQLite file: what a source may send
 * and store, what retention prunes and keeps, and a full database refused without damage.
 */
process.env.DATABASE_URL = `file:${path.join(fs.mkdtempSync(path.join(os.tmpdir(), "radar-quota-")), "radar.db")}`;
process.env.RADAR_SOURCE_EVENTS_PER_SECOND = "10";
process.env.RADAR_SOURCE_EVENTS_BURST = "20";
process.env.RADAR_SOURCE_MAX_EVENTS = "30";
process.env.RADAR_RETENTION_DAYS = "30";

type Modules = {
  quota: typeof import("./quota");
  retention: typeof import("./retention");
  usage: typeof import("./usage");
  pipeline: typeof import("./pipeline");
  ingest: typeof import("./ingest-request");
  route: typeof import("./route");
  tokens: typeof import("./tokens");
  sources: typeof import("@/lib/db/sources");
  client: typeof import("@/lib/db/client");
};
let m: Modules;
beforeAll(async () => {
  m = {
    quota: await import("./quota"),
    retention: await import("./retention"),
    usage: await import("./usage"),
    pipeline: await import("./pipeline"),
    ingest: await import("./ingest-request"),
    route: await import("./route"),
    tokens: await import("./tokens"),
    sources: await import("@/lib/db/sources"),
    client: await import("@/lib/db/client"),
  };
});

const DAY = 24 * 60 * 60_000;
const sql = () => m.client.db().sql;
let tokenSeq = 0;

/** A source with its own token, and a POST of canonical events as that source. */
async function newSource(name: string) {
  const token = `rr_quota_${++tokenSeq}_${Date.now()}`;
  const source = await m.tokens.createSource(name, token);
  const handler = m.route.route({ access: "ingest", text: m.ingest.INGEST_BODY }, ({ request, text, source, now }) =>
    m.ingest.handleIngest(request, text, source, "canonical", now),
  );
  const post = (events: unknown[]) =>
    handler(
      new Request("http://radar.test/api/v1/events", {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(events),
      }),
    );
  return { source, post };
}

const stored = (sourceId: string) =>
  sql().prepare(`SELECT count(*) AS events, coalesce(sum(octet_length(raw) + octet_length(normalized)), 0) AS bytes FROM "Event" WHERE sourceId = ?`).get(sourceId) as {
    events: number;
    bytes: number;
  };

describe("per-source quotas", () => {
  it("answers 429 with Retry-After beyond the rate, and admits again once the bucket refills", async () => {
    m.quota.resetRateBuckets();
    const { source } = await newSource("rate");
    const now = Date.now();
    expect(await m.quota.admitIngest(source, 20, now)).toBeNull();
    const refused = (await m.quota.admitIngest(source, 5, now))!;
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("1");
    expect((await refused.json()).detail).toMatch(/RADAR_SOURCE_EVENTS_PER_SECOND/);
    // 10 events per second: half a second later five fit again.
    expect(await m.quota.admitIngest(source, 5, now + 500)).toBeNull();
    // More than the burst can never pass at once: split it.
    expect((await m.quota.admitIngest(source, 21, now + 60_000))!.status).toBe(413);
  });

  it("counts each source's stored events and bytes, without any cost per inserted row", async () => {
    m.quota.resetRateBuckets();
    const { source, post } = await newSource("usage");
    const at = Date.now();
    const response = await post([
      { id: "u1", threadId: "u", type: "turn.started", turnId: "t1", at },
      { id: "u2", threadId: "u", type: "progress", turnId: "t1", at: at + 1 },
      { id: "u3", threadId: "u", type: "progress", turnId: "t1", at: at + 2, message: "folded into u2" },
      { id: "u4", type: "rate_limits", at: at + 3 },
    ]);
    expect(response.status).toBe(200);
    // Counted after the fact, by the periodic count (or the Sources page).
    expect(await m.sources.sourceUsage(source.id)).toEqual({ events: 0, bytes: 0 });
    await m.usage.countUsage();
    expect(await m.sources.sourceUsage(source.id)).toEqual(stored(source.id));
    expect((await m.sources.sourceUsage(source.id)).events).toBeGreaterThan(0);
    const listed = (await m.sources.listSourceOverviews()).find((s) => s.id === source.id)!;
    expect({ events: listed.events, bytes: listed.bytes }).toEqual(stored(source.id));
  });

  it("refuses a source at its storage quota with 507 naming the quota and how to raise it", async () => {
    m.quota.resetRateBuckets();
    const { source, post } = await newSource("full");
    const at = Date.now();
    const batch = (from: number, n: number) => Array.from({ length: n }, (_, i) => ({ id: `f${from + i}`, threadId: `f${from + i}`, type: "turn.started", at, turnId: "t" }));
    for (let from = 0; from < 30; from += 10) {
      expect((await post(batch(from, 10))).status).toBe(200);
      await m.usage.countUsage();
      m.quota.resetRateBuckets();
    }
    const usage = await m.sources.sourceUsage(source.id);
    expect(usage.events).toBe(30);
    // At the quota of 30, even one more event is refused.
    const refused = await post(batch(30, 1));
    expect(refused.status).toBe(507);
    expect(refused.headers.get("retry-after")).toBeTruthy();
    const problem = await refused.json();
    expect(problem).toMatchObject({ status: 507, quota: "events", limit: 30 });
    expect(problem.detail).toMatch(/RADAR_SOURCE_MAX_EVENTS/);
    expect(problem.detail).toMatch(/RADAR_RETENTION_DAYS/);
    expect((await m.sources.sourceUsage(source.id)).events).toBe(usage.events);
  });
});

describe("retention", () => {
  it("prunes old raw events in small batches and keeps threads, episodes, attempts and recent events", async () => {
    m.quota.resetRateBuckets();
    const { source } = await newSource("retention");
    const now = Date.now();
    const old = now - 40 * DAY;
    let key = 0;
    const line = (event: Record<string, unknown>, receivedAt: number) => ({
      index: 0,
      event: { turnId: "u1", ...event } as never,
      nativeType: null,
      format: "canonical" as const,
      idempotencyKey: `ret-${++key}`,
      raw: event,
      receivedAt,
    });
    // A thread quiet for 40 days, with one finished retry episode.
    const quiet = [
      line({ threadId: "quiet", type: "turn.started", at: old }, old),
      line({ threadId: "quiet", type: "retry", at: old + 1, attempt: 1, maxAttempts: 5, error: { httpStatus: 429 } }, old),
      line({ threadId: "quiet", type: "attempt", at: old + 2_000, attempt: 1 }, old),
      line({ threadId: "quiet", type: "turn.completed", at: old + 3_000 }, old),
    ];
    await m.pipeline.ingestLines(source, quiet, old);
    // Old account-wide lines belong to no thread.
    await m.pipeline.ingestLines(source, Array.from({ length: 25 }, (_, i) => line({ type: "rate_limits", at: old + i }, old)), old);
    // A thread that began 40 days ago and is still talking keeps its whole history (a replay needs it).
    await m.pipeline.ingestLines(source, [line({ threadId: "long", type: "turn.started", at: old }, old)], old);
    await m.pipeline.ingestLines(source, [line({ threadId: "long", type: "progress", at: now - 1_000 }, now)], now);
    // A recent thread.
    await m.pipeline.ingestLines(source, [line({ threadId: "recent", type: "turn.started", at: now - 1_000 }, now)], now);

    const count = (table: string) => (sql().prepare(`SELECT count(*) AS n FROM "${table}"`).get() as { n: number }).n;
    const episodesBefore = count("Episode");
    const attemptsBefore = count("Attempt");
    expect(episodesBefore).toBeGreaterThan(0);
    const before = stored(source.id);

    // Batches of 7 rows: many small units of work.
    const pruned = await m.retention.pruneOnce(now, 30, 7);
    expect(pruned).toBe(quiet.length + 25);
    const left = sql().prepare(`SELECT t.externalId AS thread FROM "Event" e LEFT JOIN "Thread" t ON t.id = e.threadId WHERE e.sourceId = ?`).all(source.id) as { thread: string | null }[];
    expect(left.map((row) => row.thread).sort()).toEqual(["long", "long", "recent"]);
    expect(count("Episode")).toBe(episodesBefore);
    expect(count("Attempt")).toBe(attemptsBefore);
    expect(sql().prepare(`SELECT status FROM "Thread" WHERE sourceId = ? AND externalId = 'quiet'`).get(source.id)).toEqual({ status: expect.any(String) });
    // Usage follows the deletes; a second pass finds nothing.
    expect(await m.sources.sourceUsage(source.id)).toEqual(stored(source.id));
    expect(stored(source.id).events).toBe(before.events - pruned);
    expect(await m.retention.pruneOnce(now, 30, 7)).toBe(0);
  });
});

describe("a full disk", () => {
  it("answers 503 with Retry-After, stores nothing of the refused batch and corrupts nothing", async () => {
    m.quota.resetRateBuckets();
    const { source, post } = await newSource("disk");
    const at = Date.now();
    expect((await post([{ id: "d0", threadId: "d", type: "turn.started", turnId: "t", at }])).status).toBe(200);
    const before = stored(source.id);
    const pages = sql().pragma("page_count", { simple: true }) as number;
    // Room for almost nothing more: the next sizeable batch cannot be written.
    sql().pragma(`max_page_count = ${pages + 1}`);
    try {
      const big = Array.from({ length: 15 }, (_, i) => ({ id: `d${i + 1}`, threadId: `d${i}`, type: "turn.started", turnId: "t", at, message: "x".repeat(20_000) }));
      const refused = await post(big);
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBeTruthy();
      expect((await refused.json()).title).toBe("Storage full");
      expect(stored(source.id)).toEqual(before);
      expect(sql().pragma("integrity_check", { simple: true })).toBe("ok");
    } finally {
      sql().pragma("max_page_count = 1073741823");
    }
    m.quota.resetRateBuckets();
    // With room again, the same batch goes through.
    expect((await post([{ id: "d1", threadId: "d", type: "progress", turnId: "t", at: at + 1 }])).status).toBe(200);
  });
});
