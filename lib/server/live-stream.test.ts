import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import type { Principal } from "@/lib/auth/principal";
import type { NormalizedLine } from "@/lib/ingest/types";
import type { StreamCaller } from "./live-stream";
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

/**
 * The reads of rows by key: each one's keys are recorded; with `failNext` the next fails (a store
 * that cannot answer), with `slowNextMs` the next answers that much later (a slow store).
 */
const rowReads = vi.hoisted(() => ({ failNext: false, slowNextMs: 0, keys: [] as number[][] }));
vi.mock("@/lib/db/threads", async (importOriginal) => {
  const real = await importOriginal<typeof import("@/lib/db/threads")>();
  return {
    ...real,
    threadRows: async (...args: Parameters<typeof real.threadRows>) => {
      rowReads.keys.push(args[0]);
      if (rowReads.failNext) {
        rowReads.failNext = false;
        throw new Error("the store could not answer");
      }
      const slowMs = rowReads.slowNextMs;
      rowReads.slowNextMs = 0;
      const rows = await real.threadRows(...args);
      if (slowMs > 0) await new Promise((resolve) => setTimeout(resolve, slowMs));
      return rows;
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

/** A viewer signed in with a session; `stillValid` answers the stream's re-checks. */
const viewer = (personId = "person-v", sessionId = "session-v"): Principal => ({
  kind: "person", id: personId, role: "viewer", actor: `${personId}@stream.test`, personId, displayName: personId, sessionId,
});

function open(client: string, caller: StreamCaller = { principal: viewer(), stillValid: async () => true }) {
  const controller = new AbortController();
  controllers.push(controller);
  const response = m.stream.liveStream(new Request("http://radar.test/api/v1/stream", { headers: { "x-forwarded-for": client }, signal: controller.signal }), caller);
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

/** A canonical line, as the ingest route normalises one: `event` in turn u1, at `now`. */
function canonicalLine(index: number, idempotencyKey: string, now: number, event: { type: string; threadId: string } & Record<string, unknown>): NormalizedLine {
  return { index, event: { at: now, turnId: "u1", ...event } as NormalizedLine["event"], nativeType: null, format: "canonical", idempotencyKey, raw: {}, receivedAt: now };
}

describe("the live stream", () => {
  it("carries the rows of a few changed threads as the unfiltered board shows them, and keys only for a burst", async () => {
    const source = await m.tokens.createSource("rows", `rr_rows_${Date.now()}`);
    const now = Date.now();
    const line = (index: number, threadId: string, type: string, extra: object = {}) => canonicalLine(index, `rows-${threadId}-${index}`, now, { type, threadId, ...extra });
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
    const lines = Array.from({ length: count }, (_, i) => canonicalLine(i, `parts-${now}-${i}`, now, { type: "turn.started", threadId: `parts-${i}`, title }));
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

  it("sends a thread whose row alone is too large in a notice of its own, keys only, and the others' rows still", async () => {
    const source = await m.tokens.createSource("large", `rr_large_${Date.now()}`);
    const now = Date.now();
    const lines = Array.from({ length: 5 }, (_, i) => canonicalLine(i, `large-${now}-${i}`, now, { type: "turn.started", threadId: `large-${i}`, ...(i === 2 ? { title: "L".repeat(30_000) } : {}) }));
    await quiet();
    const stream = open("10.0.6.4");
    const reading = threadsEvents(stream.response, (events) => events.reduce((n, event) => n + event.threads.length, 0) >= 5);
    const { threadIds } = await m.pipeline.ingestLines(source, lines, now);
    const events = await reading;
    stream.close();
    const [large] = await m.threads.threadRows([threadIds[2]], now, {});
    expect(large.title).toHaveLength(30_000);
    // In key order: the two before it with their rows, it alone without, the two after it with theirs.
    expect(events.map((event) => [event.threads.map((change) => change.key), event.rows?.map((row) => row.key)])).toEqual([
      [threadIds.slice(0, 2), threadIds.slice(0, 2)],
      [[threadIds[2]], undefined],
      [threadIds.slice(3), threadIds.slice(3)],
    ]);
  });

  it("sends keys only when the rows cannot be read, and goes on with the next publication", async () => {
    const source = await m.tokens.createSource("unread", `rr_unread_${Date.now()}`);
    const now = Date.now();
    const line = (i: number) => canonicalLine(0, `unread-${now}-${i}`, now, { type: "turn.started", threadId: `unread-${i}` });
    await quiet();
    const stream = open("10.0.6.5");
    const reading = threadsEvents(stream.response, (events) => events.length >= 2);
    rowReads.failNext = true;
    await m.pipeline.ingestLines(source, [line(1)], now);
    await quiet();
    await m.pipeline.ingestLines(source, [line(2)], now);
    const [failed, next] = await reading;
    stream.close();
    expect(rowReads.failNext).toBe(false);
    expect(failed).toMatchObject({ threads: [{ reorder: true }] });
    expect(failed.rows).toBeUndefined();
    expect(next.rows).toHaveLength(1);
  });

  it("reads rows in publication order: parts of a publication still unread when a newer one is made go keys only", async () => {
    const source = await m.tokens.createSource("order", `rr_order_${Date.now()}`);
    const now = Date.now();
    const lines = Array.from({ length: 2 * m.stream.LIVE_ROWS_MAX + 1 }, (_, i) => canonicalLine(i, `order-${now}-${i}`, now, { type: "turn.started", threadId: `order-${i}` }));
    const { threadIds } = await m.pipeline.ingestLines(source, lines, now);
    const keys = threadIds.toSorted((a, b) => a - b);
    await quiet();
    const stream = open("10.0.6.6");
    const reading = threadsEvents(stream.response, (events) => events.length >= 4);
    rowReads.keys = [];
    // The first part's read answers after the window, in which a second publication is made.
    rowReads.slowNextMs = 3 * m.bus.COALESCE_MS;
    m.bus.publishThreadChanges(keys.map((key) => ({ key, reorder: false })));
    m.bus.publishThreadChanges([{ key: keys[0], reorder: false }]);
    const events = await reading;
    stream.close();
    expect(rowReads.keys).toEqual([keys.slice(0, m.stream.LIVE_ROWS_MAX), [keys[0]]]);
    expect(events.map((event) => [event.threads.length, event.rows?.length])).toEqual([
      [m.stream.LIVE_ROWS_MAX, m.stream.LIVE_ROWS_MAX],
      [m.stream.LIVE_ROWS_MAX, undefined],
      [1, undefined],
      [1, 1],
    ]);
  });

  it("measures the rows' size in UTF-8 bytes: rows that are few characters but many bytes go out as keys only", async () => {
    const source = await m.tokens.createSource("utf8", `rr_utf8_${Date.now()}`);
    const now = Date.now();
    await quiet();
    const stream = open("10.0.7.1");
    const first = threadsEvents(stream.response, (events) => events.length >= 1);
    // 9,000 characters of three UTF-8 bytes each: under 24 KiB as a JavaScript length, 27 KB on the wire.
    const title = "界".repeat(9_000);
    const line = canonicalLine(0, `utf8-${now}`, now, { type: "turn.started", threadId: "utf8-a", title });
    await m.pipeline.ingestLines(source, [line], now);
    const [notice] = await first;
    expect(notice.threads).toHaveLength(1);
    expect(notice.rows).toBeUndefined();
    stream.close();
  });

  /**
   * `publications` publications of `threads` changed threads each, rows of about `titleBytes`,
   * while the stream opened for `client` is not read: what it holds unread grows with each.
   */
  async function publishUnread(client: string, publications: number, threads: number, titleBytes: number) {
    const name = `unread-${client}`;
    const source = await m.tokens.createSource(name, `rr_${name}_${Date.now()}`);
    const title = "t".repeat(titleBytes);
    let seq = 0;
    await quiet();
    const stream = open(client);
    for (let batch = 0; batch < publications; batch++) {
      const now = Date.now();
      const lines = Array.from({ length: threads }, (_, i) => canonicalLine(i, `${name}-${++seq}`, now, { type: "progress", threadId: `${name}-${i}`, title: `${title}${batch}` }));
      await m.pipeline.ingestLines(source, lines, now);
      await quiet();
    }
    return stream;
  }

  it("sends a reader that has fallen behind keys only, so rows never get it dropped", async () => {
    // Twelve publications of three ~4 KB rows each while nobody reads: far more than half the buffer.
    const stream = await publishUnread("10.0.8.1", 12, 3, 4_000);
    const events = await threadsEvents(stream.response, (seen) => seen.length >= 12);
    expect(events).toHaveLength(12);
    expect(events[0].rows).toHaveLength(3);
    expect(events.at(-1)!.rows).toBeUndefined();
    stream.close();
  });

  it("never gets a reader dropped for the rows of publications sent in several notices: once half its buffer is taken, keys only", async () => {
    // Rows of about 1.2 KB: a publication of 100 threads carries about 120 KB of them in six notices.
    const stream = await publishUnread("10.0.8.2", 3, 100, 1_000);
    expect(m.stream.openStreams("10.0.8.2")).toBe(1);
    const { events, texts } = await readNotices(stream.response, (seen) => seen.reduce((n, event) => n + event.threads.length, 0) >= 300);
    stream.close();
    expect(events.reduce((n, event) => n + event.threads.length, 0)).toBe(300);
    expect(events[0].rows).toBeDefined();
    expect(events.at(-1)!.rows).toBeUndefined();
    // What was queued with rows never exceeded what the stream may hold unread.
    const withRows = texts.filter((_, i) => events[i].rows !== undefined);
    expect(withRows.reduce((n, text) => n + Buffer.byteLength(text), 0)).toBeLessThanOrEqual(m.stream.STREAM_BUFFER_BYTES);
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
        const lines = Array.from({ length: 20 }, (_, i) => canonicalLine(i, `busy-${++seq}`, now, { type: "progress", threadId: `busy-${i}` }));
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

/** Reads a stream to its end: every event's name and data (comments skipped). */
async function eventsToEnd(response: Response): Promise<{ event: string; data: string }[]> {
  const text = await response.text();
  return text
    .split("\n\n")
    .map((block) => block.split("\n").filter((line) => line !== "" && !line.startsWith(":") && !line.startsWith("retry:")))
    .filter((lines) => lines.length > 0)
    .map((lines) => ({ event: lines.find((l) => l.startsWith("event: "))?.slice(7) ?? "message", data: lines.find((l) => l.startsWith("data: "))?.slice(6) ?? "" }));
}

/** Resolves when the stream ends, with its last event; never resolves while it stays open. */
const ended = (response: Response) => eventsToEnd(response).then((events) => events.at(-1));

describe("a live stream never outlives its caller's credentials", () => {
  const settled = async <T>(promise: Promise<T>) => {
    let done = false;
    void promise.then(() => (done = true));
    // Long enough for any reaction already due: a few turns of the event loop.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    return done;
  };

  it("a `principals` publication ends the streams it concerns at once, with a final `end` event, and only those", async () => {
    const key: Principal = { kind: "key", id: "key-1", role: "viewer", actor: 'api key "k"', personId: "person-k", displayName: "k", sessionId: null };
    const valid = async () => true;
    const streams = {
      key: open("10.0.8.1", { principal: key, stillValid: valid }),
      otherKey: open("10.0.8.2", { principal: { ...key, id: "key-2" }, stillValid: valid }),
      session: open("10.0.8.3", { principal: viewer("person-a", "session-a1"), stillValid: valid }),
      sameSession: open("10.0.8.4", { principal: viewer("person-a", "session-a2"), stillValid: valid }),
      otherPerson: open("10.0.8.5", { principal: viewer("person-b", "session-b1"), stillValid: valid }),
    };
    const ends = Object.fromEntries(Object.entries(streams).map(([name, stream]) => [name, ended(stream.response)]));
    const before = m.stream.openStreams();

    m.bus.publishPrincipalsChanged({ kind: "key", id: "key-1" });
    expect(await ends.key).toEqual({ event: "end", data: JSON.stringify({ reason: "credentials" }) });
    expect(await settled(ends.otherKey)).toBe(false);
    expect(m.stream.openStreams()).toBe(before - 1);

    m.bus.publishPrincipalsChanged({ kind: "session", id: "session-a1" });
    expect((await ends.session)?.event).toBe("end");
    expect(await settled(ends.sameSession)).toBe(false);

    // "Sign out everywhere" ends the person's sessions' streams, not their keys'.
    m.bus.publishPrincipalsChanged({ kind: "sessions", id: "person-k" });
    expect(await settled(ends.otherKey)).toBe(false);
    // A person disabled or demoted: every stream of theirs, keys included.
    m.bus.publishPrincipalsChanged({ kind: "person", id: "person-k" });
    expect((await ends.otherKey)?.event).toBe("end");
    m.bus.publishPrincipalsChanged({ kind: "sessions", id: "person-a" });
    expect((await ends.sameSession)?.event).toBe("end");

    expect(await settled(ends.otherPerson)).toBe(false);
    expect(m.stream.openStreams()).toBe(before - 4);
    streams.otherPerson.close();
  });

  describe("by the clock", () => {
    beforeEach(() => void vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "setTimeout", "clearTimeout"] }));
    afterEach(() => void vi.useRealTimers());

    it("asks again every PRINCIPAL_RECHECK_MS and ends the stream once the credentials no longer hold", async () => {
      let valid = true;
      let asked = 0;
      const stream = open("10.0.8.6", { principal: viewer(), stillValid: async () => (asked++, valid) });
      const end = ended(stream.response);
      await vi.advanceTimersByTimeAsync(m.stream.PRINCIPAL_RECHECK_MS);
      expect(asked).toBe(1);
      await vi.advanceTimersByTimeAsync(m.stream.PRINCIPAL_RECHECK_MS);
      expect(asked).toBe(2);
      expect(await settled(end)).toBe(false);
      valid = false;
      await vi.advanceTimersByTimeAsync(m.stream.PRINCIPAL_RECHECK_MS);
      expect(await end).toEqual({ event: "end", data: JSON.stringify({ reason: "credentials" }) });
      expect(m.stream.PRINCIPAL_RECHECK_MS).toBeLessThanOrEqual(30_000);
    });

    it("a re-check that fails ends the stream too", async () => {
      const stream = open("10.0.8.7", { principal: viewer(), stillValid: () => Promise.reject(new Error("the store could not answer")) });
      const end = ended(stream.response);
      await vi.advanceTimersByTimeAsync(m.stream.PRINCIPAL_RECHECK_MS);
      expect((await end)?.data).toBe(JSON.stringify({ reason: "credentials" }));
    });

    it("ends every stream after STREAM_MAX_LIFETIME_MS, valid credentials or not", async () => {
      const before = m.stream.openStreams();
      const stream = open("10.0.8.8");
      const end = ended(stream.response);
      await vi.advanceTimersByTimeAsync(m.stream.STREAM_MAX_LIFETIME_MS - 1);
      expect(await settled(end)).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(await end).toEqual({ event: "end", data: JSON.stringify({ reason: "lifetime" }) });
      expect(m.stream.openStreams()).toBe(before);
    });
  });
});
