import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RadarClient } from "./client";
import { Forwarder } from "./forwarder";
import type { Logger } from "./log";

interface Call {
  url: string;
  body: string;
}

function fakeFetch(script: ((call: Call, n: number) => Response | Error)[], fallback: (call: Call) => Response) {
  const calls: Call[] = [];
  const impl = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const call = { url: String(input), body: String(init?.body ?? "") };
    calls.push(call);
    const step = script[calls.length - 1];
    const r = step ? step(call, calls.length) : fallback(call);
    if (r instanceof Error) throw r;
    return r;
  }) as typeof fetch;
  return { impl, calls };
}

const okFor = (call: Call, directives: unknown[] = []) =>
  Response.json({ accepted: call.body.trim().split("\n").length, duplicates: 0, rejected: [], directives });

function logger() {
  const lines: string[] = [];
  const push = (m: string) => void lines.push(m);
  const log: Logger = { info: push, warn: push, error: push, debug() {} };
  return { log, lines };
}

const fastBackoff = { baseMs: 10, maxMs: 40, factor: 2, jitter: 0, maxRetryAfterMs: 1_000 };
const dirs: string[] = [];
const tmp = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "relay-fwd-test-"));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe("relay forwarder", () => {
  it("batches lines, retries through outages with byte-identical bodies, and says so", async () => {
    const refused = Object.assign(new TypeError("fetch failed"), { cause: { code: "ECONNREFUSED" } });
    const { impl, calls } = fakeFetch(
      [() => refused, () => refused, () => new Response("busy", { status: 503, headers: { "retry-after": "0" } })],
      (call) => okFor(call),
    );
    const { log, lines } = logger();
    const f = new Forwarder({
      client: new RadarClient("http://radar.test", "tok", impl),
      format: "codex",
      spoolDir: tmp(),
      log,
      flushIntervalMs: 20,
      maxBatchLines: 3,
      backoff: fastBackoff,
    });
    f.start();
    for (let i = 0; i < 5; i++) f.push(`{"method":"item/started","params":{"threadId":"t","n":${i}}}`, 1_800_000_000_000 + i);
    expect(await f.flush(5_000)).toBe(true);
    // The first batch was tried 4 times with the same bytes, then the rest went.
    expect(calls[0].body).toBe(calls[1].body);
    expect(calls[0].body).toBe(calls[3].body);
    expect(calls[0].body.trim().split("\n")).toHaveLength(3);
    expect(calls[0].body.split("\n")[0]).toBe('{"at":1800000000000,"message":{"method":"item/started","params":{"threadId":"t","n":0}}}');
    expect(calls.at(-1)!.body.trim().split("\n")).toHaveLength(2);
    expect(calls[0].url).toBe("http://radar.test/api/v1/ingest/codex");
    expect(lines.some((l) => /radar unreachable \(ECONNREFUSED\), 5 events buffered, retrying in/.test(l))).toBe(true);
    expect(lines.some((l) => /radar busy \(503/.test(l) && /as the server asked/.test(l))).toBe(true);
    expect(lines.some((l) => /radar reachable again/.test(l))).toBe(true);
    expect(f.stats).toMatchObject({ delivered: 5, accepted: 5, failures: 3 });
    expect(await f.close(1_000)).toEqual({ delivered: 5, undelivered: 0, undeliveredFile: null });
  });

  it("names the stream's thread in ?threadId= for codex exec once known, and hands over directives", async () => {
    const directive = { id: "d1", threadId: "x1", turnId: null, kind: "interrupt", reason: "stop", createdAt: "2026-01-01T00:00:00Z" };
    const { impl, calls } = fakeFetch([], (call) => okFor(call, calls.length === 2 ? [directive] : []));
    const got: unknown[] = [];
    const f = new Forwarder({
      client: new RadarClient("http://radar.test/", "tok", impl),
      format: "codex-exec",
      spoolDir: tmp(),
      log: logger().log,
      flushIntervalMs: 5,
      onDirectives: (d) => got.push(...d),
    });
    f.start();
    f.push('{"type":"thread.started","thread_id":"x1"}');
    await f.flush(2_000);
    f.push('{"type":"error","message":"Reconnecting... 1/5"}');
    await f.flush(2_000);
    expect(new URL(calls[0].url).searchParams.get("threadId")).toBeNull();
    expect(new URL(calls[1].url).searchParams.get("threadId")).toBe("x1");
    expect(got).toEqual([directive]);
    await f.close(500);
  });

  it("keeps lines the server rejects in a file instead of dropping them silently", async () => {
    const { impl } = fakeFetch([], () => Response.json({ accepted: 1, duplicates: 0, rejected: [{ index: 1, error: "session_id: required" }], directives: [] }));
    const { log, lines } = logger();
    const dir = tmp();
    const f = new Forwarder({ client: new RadarClient("http://r", "t", impl), format: "claude", spoolDir: dir, log, flushIntervalMs: 5 });
    f.start();
    f.push('{"type":"system","subtype":"init","session_id":"s"}', 1_800_000_000_000);
    f.push('{"type":"weird"}', 1_800_000_000_001);
    await f.flush(2_000);
    await f.close(500);
    expect(lines.some((l) => l.includes("session_id: required"))).toBe(true);
    expect(fs.readFileSync(path.join(dir, "rejected-claude.ndjson"), "utf8")).toBe('{"at":1800000000001,"message":{"type":"weird"}}\n');
  });

  it("on exit, saves what it could not deliver and reports the file", async () => {
    const { impl } = fakeFetch([], () => new Response("down", { status: 502 }));
    const { log, lines } = logger();
    const dir = tmp();
    const f = new Forwarder({ client: new RadarClient("http://r", "t", impl), format: "codex", spoolDir: dir, log, flushIntervalMs: 5, backoff: fastBackoff, memoryLimitBytes: 64 });
    f.start();
    for (let i = 0; i < 4; i++) f.push(`{"method":"m","params":{"i":${i}}}`, 1_800_000_000_000);
    const report = await f.close(300);
    expect(report.undelivered).toBe(4);
    expect(report.undeliveredFile).toBeTruthy();
    expect(fs.readFileSync(report.undeliveredFile!, "utf8").trim().split("\n")).toHaveLength(4);
    expect(lines.some((l) => l.includes("could not deliver 4 event(s)") && l.includes(report.undeliveredFile!))).toBe(true);
  });

  it("halves the batch on 413", async () => {
    const { impl, calls } = fakeFetch([() => new Response("too big", { status: 413 })], (call) => okFor(call));
    const f = new Forwarder({ client: new RadarClient("http://r", "t", impl), format: "codex", spoolDir: tmp(), log: logger().log, flushIntervalMs: 5, maxBatchLines: 4 });
    for (let i = 0; i < 4; i++) f.push(`{"method":"m","params":{"i":${i}}}`);
    f.start();
    await f.flush(2_000);
    expect(calls.map((c) => c.body.trim().split("\n").length)).toEqual([4, 2, 2]);
    await f.close(200);
  });

  it("splits a batch the server keeps failing with the same 500 down to the line at fault, quarantines it, and delivers the rest", async () => {
    const { impl, calls } = fakeFetch([], (call) => (call.body.includes("poison") ? new Response("boom", { status: 500 }) : okFor(call)));
    const { log, lines } = logger();
    const dir = tmp();
    const f = new Forwarder({ client: new RadarClient("http://r", "t", impl), format: "codex", spoolDir: dir, log, flushIntervalMs: 5, backoff: fastBackoff, maxBatchLines: 4 });
    for (const name of ["a", "b", "poison", "c", "d"]) f.push(`{"method":"m","params":{"n":"${name}"}}`, 1_800_000_000_000);
    f.start();
    // The bound only stops a hung test: flush resolves as soon as the queue is empty.
    expect(await f.flush(60_000)).toBe(true);
    await f.close(500);
    const delivered = calls.filter((c) => !c.body.includes("poison")).flatMap((c) => c.body.trim().split("\n").map((l) => JSON.parse(l).message.params.n));
    expect(delivered.sort()).toEqual(["a", "b", "c", "d"]);
    expect(fs.readFileSync(path.join(dir, "quarantine-codex.ndjson"), "utf8")).toBe('{"at":1800000000000,"message":{"method":"m","params":{"n":"poison"}}}\n');
    expect(fs.statSync(path.join(dir, "quarantine-codex.ndjson")).mode & 0o777).toBe(0o600);
    expect(lines.some((l) => l.startsWith("QUARANTINED 1 line") && l.includes("500"))).toBe(true);
    expect(f.stats).toMatchObject({ delivered: 4, rejected: 1 });
  });

  it.each([
    ["a 503 with Retry-After", () => new Response("busy", { status: 503, headers: { "retry-after": "0" } })],
    ["a 429 with Retry-After", () => new Response("slow down", { status: 429, headers: { "retry-after": "0" } })],
    ["a 502 from a proxy", () => new Response("bad gateway", { status: 502 })],
  ])("%s is waited out however often it repeats, never quarantined", async (_name, busy) => {
    const { impl } = fakeFetch(Array.from({ length: 6 }, () => busy), (call) => okFor(call));
    const dir = tmp();
    const f = new Forwarder({ client: new RadarClient("http://r", "t", impl), format: "codex", spoolDir: dir, log: logger().log, flushIntervalMs: 5, backoff: fastBackoff });
    f.push('{"method":"m","params":{"n":1}}');
    f.start();
    expect(await f.flush(60_000)).toBe(true);
    await f.close(500);
    expect(f.stats).toMatchObject({ delivered: 1, rejected: 0 });
    expect(fs.existsSync(path.join(dir, "quarantine-codex.ndjson"))).toBe(false);
  });

  it("sends first what a relay that died on the same spool directory had not delivered to the same radar and source", async () => {
    const dir = tmp();
    const dead = 2 ** 22 + 4_242;
    const stem = `codex-${new RadarClient("http://r", "t").destination}-${dead}-0`;
    // A journal of the same format for another radar or source is not ours to send.
    const other = `codex-${new RadarClient("http://r", "another-token").destination}-${dead}-0.spool.ndjson`;
    fs.writeFileSync(path.join(dir, other), '{"at":9,"message":{"method":"m","params":{"n":"not-mine"}}}\n', { mode: 0o600 });
    const left = ['{"at":1,"message":{"method":"m","params":{"n":"old-1"}}}', '{"at":2,"message":{"method":"m","params":{"n":"old-2"}}}'];
    fs.writeFileSync(path.join(dir, `${stem}.spool.ndjson`), `{"at":0,"message":{"method":"m","params":{"n":"delivered"}}}\n${left.join("\n")}\n`, { mode: 0o600 });
    fs.writeFileSync(path.join(dir, `${stem}.offset`), String(Buffer.byteLength('{"at":0,"message":{"method":"m","params":{"n":"delivered"}}}\n')), { mode: 0o600 });
    const { impl, calls } = fakeFetch([], (call) => okFor(call));
    const { log, lines } = logger();
    const f = new Forwarder({ client: new RadarClient("http://r", "t", impl), format: "codex", spoolDir: dir, log, flushIntervalMs: 5 });
    f.push('{"method":"m","params":{"n":"new"}}', 3);
    f.start();
    expect(await f.flush(60_000)).toBe(true);
    await f.close(500);
    const sent = calls.flatMap((c) => c.body.trim().split("\n"));
    expect(sent).toEqual([...left, '{"at":3,"message":{"method":"m","params":{"n":"new"}}}']);
    expect(lines.some((l) => l.includes("resuming 2 event(s)"))).toBe(true);
    expect(fs.readdirSync(dir)).toEqual([other]);
  });
});
