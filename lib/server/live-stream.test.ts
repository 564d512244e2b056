import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { NormalizedLine } from "@/lib/ingest/types";
import type { StreamThreads } from "@/lib/wire/types";

/**
 * The live stream cannot be abused: capped per client and in total, a client that never reads
 * is dropped instead of buffered, and publishing costs the database nothing per open stream.
 * A publication naming few threads carries their rows as the unfiltered board shows them, in
 * notices each within the bounds of one.
 */
process.env.DATABASE_URL = `file:${path.join(fs.mkdtempSync(path.join(os.tmpdir(), "radar-stream-")), "radar.db")}`;
process.env.RADAR_STREAM_MAX_PER_CLIENT = "60";
process.env.RADAR_STREAM_MAX_TOTAL = "70";

/** Every use of the database: each db() handle taken and each serialized call. */
const usage = vi.hoisted(() => ({ count: 0 }));
vi.mock("@/lib/db/client", async (importOriginal) => {
  const real = await importOriginal<typeof import("@/lib/db/client")>();
  return {
    ...real,
    db: () => {
      usage.count++;
      return real.db();
    },
    serialized: <T>(fn: () => T | Promise<T>) => {
      usage.count++;
      return real.serialized(fn);
    },
  };
});

type Modules = {
  stream: typeof import("./live-stream");
  bus: typeof import("./bus");
  pipeline: typeof import("./pipeline");
  tokens: typeof import("./tokens");
  config: typeof import("@/lib/config");
  threads: typeof import("@/lib/db/threads");
};
let m: Modules;
beforeAll(async () => {
  m = {
    stream: await import("./live-stream"),
    bus: await import("./bus"),
    pipeline: await import("./pipeline"),
    tokens: await import("./tokens"),
    config: await import("@/lib/config"),
    threads: await import("@/lib/db/threads"),
  };
  m.config.resetConfig();
});

const controllers: AbortController[] = [];
afterAll(() => controllers.forEach((c) => c.abort()));

function open(client: string) {
  const controller = new AbortController();
  controllers.push(controller);
  const response = m.stream.liveStream(new Request("http://radar.test/api/v1/stream", { headers: { "x-forwarded-for": client }, signal: controller.signal }));
  return { response, close: () => controller.abort() };
}
const quiet = async () => {
  while (m.bus.coalescing()) await new Promise((resolve) => setTimeout(resolve, m.bus.COALESCE_MS / 4));
};

/** Reads a stream's `threads` events until `until` says enough; each parsed. */
async function threadsEvents(response: Response, until: (events: StreamThreads[]) => boolean): Promise<StreamThreads[]> {
  return (await readNotices(response, until)).events;
}

/** Reads a stream's `threads` events until `until` says enough: each parsed, and its text as sent. */
async function readNotices(response: Response, until: (events: StreamThreads[]) => boolean): Promise<{ events: StreamThreads[]; texts: string[] }> {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: StreamThreads[] = [];
  const texts: string[] = [];
  let text = "";
  while (!until(events)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
    let end: number;
    while ((end = text.indexOf("\n\n")) >= 0) {
      const block = text.slice(0, end);
      text = text.slice(end + 2);
      if (!block.startsWith("event: threads\n")) continue;
      events.push(JSON.parse(block.slice(block.indexOf("data: ") + 6)) as StreamThreads);
      texts.push(`${block}\n\n`);
    }
  }
  await reader.cancel();
  return { events, texts };
}

describe("the live stream", () => {
  it("carries the rows of a few changed threads as the unfiltered board shows them, and keys only for a burst", async () => {
    const source = await m.tokens.createSource("rows", `rr_rows_${Date.now()}`);
    const now = Date.now();
    const line = (index: number, threadId: string, type: string, extra: object = {}): NormalizedLine => ({
      index,
      event: { type, at: now, threadId, turnId: "u1", ...extra } as NormalizedLine["event"],
      nativeType: null,
      format: "canonical",
      idempotencyKey: `rows-${threadId}-${index}`,
      raw: {},
      receivedAt: now,
    });
    await quiet();
    const stream = open("10.0.6.1");
    const few = threadsEvents(stream.response, (events) => events.length >= 1);
    const { threadIds } = await m.pipeline.ingestLines(
      source,
      [line(0, "rows-a", "turn.started"), line(1, "rows-a", "retry", { attempt: 1, maxAttempts: 5, error: { httpStatus: 429 } }), line(2, "rows-b", "turn.started")],
      now,
    );
    const [notice] = await few;
    expect(notice.threads.map((change) => change.key).toSorted()).toEqual(threadIds.toSorted());
    // The very rows GET /api/v1/threads?keys=…&matching=1 answers for the unfiltered board.
    expect(notice.rows).toEqual(await m.threads.threadRows(threadIds, Date.parse(notice.serverTime), {}));
    expect(notice.rows!.find((row) => row.id === "rows-a")).toMatchObject({ status: "retrying", retry: { attempt: 1, maxAttempts: 5 } });
    stream.close();

    await quiet();
    const again = open("10.0.6.2");
    const burst = threadsEvents(again.response, (events) => events.length >= 1);
    const many = Array.from({ length: m.stream.LIVE_ROWS_PUBLICATION_MAX + 1 }, (_, i) => line(i, `rows-many-${i}`, "turn.started"));
    await m.pipeline.ingestLines(source, many, now);
    const [keysOnly] = await burst;
    expect(keysOnly.threads).toHaveLength(m.stream.LIVE_ROWS_PUBLICATION_MAX + 1);
    expect(keysOnly.rows).toBeUndefined();
    again.close();
  });

  it("carries the rows of more threads than one notice may name in several notices, each within the bounds, every thread once", async () => {
    const source = await m.tokens.createSource("parts", `rr_parts_${Date.now()}`);
    const now = Date.now();
    // A title of 300 characters: 40 rows are more than 24 KiB, so a part of 40 splits again.
    const title = "p".repeat(300);
    const count = 2 * m.stream.LIVE_ROWS_MAX + 7;
    const lines: NormalizedLine[] = Array.from({ length: count }, (_, i) => ({
      index: i,
      event: { type: "turn.started", at: now, threadId: `parts-${i}`, turnId: "u1", title } as NormalizedLine["event"],
      nativeType: null,
      format: "canonical",
      idempotencyKey: `parts-${now}-${i}`,
      raw: {},
      receivedAt: now,
    }));
    await quiet();
    const stream = open("10.0.6.3");
    const reading = readNotices(stream.response, (events) => events.reduce((n, event) => n + event.threads.length, 0) >= count);
    const { threadIds } = await m.pipeline.ingestLines(source, lines, now);
    const { events, texts } = await reading;
    stream.close();
    expect(events.length).toBeGreaterThan(Math.ceil(count / m.stream.LIVE_ROWS_MAX));
    for (const [i, event] of events.entries()) {
      expect(event.threads.length).toBeLessThanOrEqual(m.stream.LIVE_ROWS_MAX);
      expect(Buffer.byteLength(texts[i])).toBeLessThanOrEqual(24 * 1024);
      expect(event.rows).toEqual(await m.threads.threadRows(event.threads.map((change) => change.key), Date.parse(event.serverTime), {}));
    }
    // Each thread named once.
    expect(events.flatMap((event) => event.threads.map((change) => change.key)).toSorted((a, b) => a - b)).toEqual(threadIds.toSorted((a, b) => a - b));
  });

  it("measures the rows' size in UTF-8 bytes: rows that are few characters but many bytes go out as keys only", async () => {
    const source = await m.tokens.createSource("utf8", `rr_utf8_${Date.now()}`);
    const now = Date.now();
    await quiet();
    const stream = open("10.0.7.1");
    const first = threadsEvents(stream.response, (events) => events.length >= 1);
    // 9,000 characters of three UTF-8 bytes each: under 24 KiB as a JavaScript length, 27 KB on the wire.
    const title = "界".repeat(9_000);
    const line: NormalizedLine = {
      index: 0,
      event: { type: "turn.started", at: now, threadId: "utf8-a", turnId: "u1", title } as NormalizedLine["event"],
      nativeType: null,
      format: "canonical",
      idempotencyKey: `utf8-${now}`,
      raw: {},
      receivedAt: now,
    };
    await m.pipeline.ingestLines(source, [line], now);
    const [notice] = await first;
    expect(notice.threads).toHaveLength(1);
    expect(notice.rows).toBeUndefined();
    stream.close();
  });

  it("sends a reader that has fallen behind keys only, so rows never get it dropped", async () => {
    const source = await m.tokens.createSource("behind", `rr_behind_${Date.now()}`);
    const title = "t".repeat(4_000);
    let seq = 0;
    await quiet();
    const stream = open("10.0.8.1");
    // Twelve publications of three ~4 KB rows each while nobody reads: far more than half the buffer.
    for (let batch = 0; batch < 12; batch++) {
      const now = Date.now();
      const lines: NormalizedLine[] = Array.from({ length: 3 }, (_, i) => ({
        index: i,
        event: { type: "progress", at: now, threadId: `behind-${i}`, turnId: "u1", title: `${title}${batch}` } as NormalizedLine["event"],
        nativeType: null,
        format: "canonical",
        idempotencyKey: `behind-${++seq}`,
        raw: {},
        receivedAt: now,
      }));
      await m.pipeline.ingestLines(source, lines, now);
      await quiet();
    }
    const events = await threadsEvents(stream.response, (seen) => seen.length >= 12);
    expect(events).toHaveLength(12);
    expect(events[0].rows).toHaveLength(3);
    expect(events.at(-1)!.rows).toBeUndefined();
    stream.close();
  });

  it("says hello again when other instances' publications may have been missed (a resync): the browser refetches everything", async () => {
    const stream = open("10.0.6.9");
    const reader = stream.response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    const hellos = () => text.split("event: hello\n").length - 1;
    while (hellos() < 1) text += (await reader.read()).value ?? "";
    m.bus.publishResync();
    while (hellos() < 2) text += (await reader.read()).value ?? "";
    await reader.cancel();
    stream.close();
  });

  it("caps streams per client and in total, answering 429 with Retry-After", async () => {
    const { perClient, total } = m.config.streamLimits();
    const mine = Array.from({ length: perClient }, () => open("10.0.0.1"));
    expect(mine.every((s) => s.response.status === 200)).toBe(true);
    const refused = open("10.0.0.1").response;
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    const others = Array.from({ length: total - perClient }, (_, i) => open(`10.0.1.${i}`));
    expect(others.every((s) => s.response.status === 200)).toBe(true);
    expect(open("10.0.2.1").response.status).toBe(429);
    // Closing frees the slots.
    for (const s of [...mine, ...others]) s.close();
    expect(m.stream.openStreams()).toBe(0);
    const again = open("10.0.0.1");
    expect(again.response.status).toBe(200);
    again.close();
  });

  it("drops a client that never reads instead of buffering what it misses", async () => {
    const before = m.stream.openStreams();
    const idle = open("10.0.3.1");
    expect(m.stream.openStreams()).toBe(before + 1);
    // Each publication names thousands of threads: a few exceed what one stream may hold unread.
    const keys = Array.from({ length: 5_000 }, (_, i) => ({ key: 1_000_000 + i, reorder: false }));
    for (let i = 0; i < 4 && m.stream.openStreams() > before; i++) {
      await quiet();
      m.bus.publishThreadChanges(keys);
    }
    expect(m.stream.openStreams()).toBe(before);
    await expect(idle.response.text()).rejects.toThrow();
  });

  it("costs the database no more work with 50 streams open than with one while a source is busy", async () => {
    const source = await m.tokens.createSource("busy", `rr_busy_${Date.now()}`);
    let seq = 0;
    const burst = async () => {
      const start = usage.count;
      for (let batch = 0; batch < 5; batch++) {
        const now = Date.now();
        const lines: NormalizedLine[] = Array.from({ length: 20 }, (_, i) => ({
          index: i,
          event: { type: "progress", at: now, threadId: `busy-${i}`, turnId: "u1" },
          nativeType: null,
          format: "canonical",
          idempotencyKey: `busy-${++seq}`,
          raw: {},
          receivedAt: now,
        }));
        await m.pipeline.ingestLines(source, lines, now);
        await quiet();
      }
      return usage.count - start;
    };
    await burst(); // creates the threads: later bursts do the same work each
    const one = open("10.0.4.1");
    const withOne = await burst();
    const fifty = [one, ...Array.from({ length: 49 }, (_, i) => open(`10.0.5.${i}`))];
    expect(fifty.every((s) => s.response.status === 200)).toBe(true);
    const withFifty = await burst();
    expect(withOne).toBeGreaterThan(0);
    expect(withFifty).toBe(withOne);
    for (const s of fifty) s.close();
  });
});
