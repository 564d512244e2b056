/**
 * codex-app-server mode end to end, in process, against a fake radar (HTTP) and a fake
 * `codex app-server` (test-fixtures/fake-app-server.mjs): notifications are forwarded wrapped
 * with their receive time, an `interrupt` without a turn id interrupts the thread's current
 * turn, a second interrupt for a finished turn is acknowledged as failed with Codex's error,
 * and `continue` starts a promptless turn (input []). The real-Codex suites are in e2e/api.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { parseRelayArgs, type RelayConfig } from "./args";
import type { Directive } from "./client";
import { createLogger } from "./log";
import { runRelay, type RelayIO } from "./relay";

const FAKE = path.join(import.meta.dirname, "test-fixtures", "fake-app-server.mjs");

interface FakeRadar {
  url: string;
  ingested: string[];
  acks: { id: string; body: { result: string; detail: string } }[];
  queue: Directive[];
  close(): Promise<void>;
}

async function fakeRadar(): Promise<FakeRadar> {
  const state = { ingested: [] as string[], acks: [] as FakeRadar["acks"], queue: [] as Directive[] };
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const url = new URL(req.url!, "http://x");
      res.setHeader("content-type", "application/json");
      if (req.headers.authorization !== "Bearer tok") {
        res.statusCode = 401;
        return res.end("{}");
      }
      if (url.pathname === "/api/v1/ingest/codex") {
        const lines = body.trim().split("\n");
        state.ingested.push(...lines);
        return res.end(JSON.stringify({ accepted: lines.length, duplicates: 0, rejected: [], directives: [] }));
      }
      if (url.pathname === "/api/v1/directives") {
        const send = () => res.end(JSON.stringify({ directives: state.queue.splice(0), serverTime: new Date().toISOString() }));
        if (state.queue.length) return send();
        return void setTimeout(send, 100);
      }
      const ack = /^\/api\/v1\/directives\/([^/]+)\/ack$/.exec(url.pathname);
      if (ack) {
        state.acks.push({ id: decodeURIComponent(ack[1]), body: JSON.parse(body) });
        return res.end(JSON.stringify({ id: ack[1] }));
      }
      res.statusCode = 404;
      res.end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ...state,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function testIO() {
  let fire: ((s: NodeJS.Signals) => void) | null = null;
  const stderr = new PassThrough();
  let err = "";
  stderr.on("data", (c) => (err += c));
  const io: RelayIO = {
    stdin: new PassThrough(),
    stdout: new PassThrough(),
    stderr,
    stdinForChild: "ignore",
    onSignal(handler) {
      fire = handler;
      return () => (fire = null);
    },
  };
  return { io, signal: (s: NodeJS.Signals) => fire?.(s), stderr: () => err };
}

/** Waits for a milestone; the bound only stops a hung test (never hit on a busy machine). */
const until = async (probe: () => boolean, ms = 120_000) => {
  const end = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
};

const directive = (id: string, kind: string, turnId: string | null = null): Directive => ({
  id,
  kind,
  turnId,
  threadId: "thread-fake-1",
  reason: "test",
  createdAt: new Date().toISOString(),
});

let radar: FakeRadar | null = null;
afterEach(async () => {
  await radar?.close();
  radar = null;
});

describe("relay codex-app-server mode (fake Codex, fake radar)", () => {
  it("forwards notifications, interrupts the current turn, reports Codex's errors and starts continuations", async () => {
    radar = await fakeRadar();
    const config = parseRelayArgs(
      ["codex-app-server", "--command", `node ${FAKE}`, "--prompt", "do it", "--stay", "--poll-wait", "1s", "--flush-interval", "20ms", "--spool", path.join(os.tmpdir(), `relay-test-${process.pid}`)],
      { RADAR_URL: radar.url, RADAR_TOKEN: "tok" },
    ) as RelayConfig;
    const t = testIO();
    const lines: string[] = [];
    const log = createLogger({ verbose: true, write: (s) => void lines.push(s) });
    const startedAt = Date.now();
    const done = runRelay(config, t.io, log);
    const r = radar;

    // The retry notice arrives at the radar wrapped with its receive time.
    await until(() => r.ingested.some((l) => l.includes("Reconnecting... 1/5")));
    const notice = JSON.parse(r.ingested.find((l) => l.includes("Reconnecting"))!);
    expect(notice).toMatchObject({ at: expect.any(Number), message: { method: "error", params: { willRetry: true, turnId: "turn-fake-1" } } });
    // Stamped when the relay received it: after the relay started, before the radar stored it.
    expect(notice.at).toBeGreaterThanOrEqual(startedAt);
    expect(notice.at).toBeLessThanOrEqual(Date.now());

    // interrupt with turnId null → the thread's current turn.
    r.queue.push(directive("d-int", "interrupt"));
    await until(() => r.acks.length >= 1);
    expect(r.acks[0]).toMatchObject({ id: "d-int", body: { result: "acknowledged" } });
    expect(t.stderr()).toMatch(/REQ \{"method":"turn\/interrupt","id":\d+,"params":\{"threadId":"thread-fake-1","turnId":"turn-fake-1"\}\}/);
    await until(() => r.ingested.some((l) => l.includes('"status":"interrupted"')));
    // Our own turn/interrupt is on the record too.
    expect(r.ingested.some((l) => l.includes('"method":"turn/interrupt"'))).toBe(true);

    // An interrupt for a turn that is over: Codex's error is the outcome.
    r.queue.push(directive("d-late", "interrupt", "turn-fake-1"));
    await until(() => r.acks.length >= 2);
    expect(r.acks[1]).toMatchObject({ id: "d-late", body: { result: "failed", detail: expect.stringContaining("no active turn turn-fake-1") } });

    // continue → turn/start with an empty input.
    r.queue.push(directive("d-cont", "continue"));
    await until(() => r.acks.length >= 3);
    expect(r.acks[2]).toMatchObject({ id: "d-cont", body: { result: "acknowledged", detail: "Codex started continuation turn turn-fake-2" } });
    expect(t.stderr()).toMatch(/REQ \{"method":"turn\/start","id":\d+,"params":\{"threadId":"thread-fake-1","input":\[\]\}\}/);
    await until(() => r.ingested.some((l) => l.includes('"turn-fake-2","status":"completed"')));

    // A directive seen twice (long-poll and an ingest response) is carried out once. Directives
    // are carried out in the order they arrive, so once a later one (an interrupt for the turn
    // that is over, answered as failed) is acknowledged, the repeat has been dealt with.
    r.queue.push(directive("d-cont", "continue"));
    await until(() => r.queue.length === 0);
    r.queue.push(directive("d-after", "interrupt", "turn-fake-1"));
    await until(() => r.acks.length >= 4);
    expect(r.acks.map((a) => a.id)).toEqual(["d-int", "d-late", "d-cont", "d-after"]);

    t.signal("SIGINT");
    expect(await done).toBe(130);
    expect(lines.join("")).toMatch(/forwarded \d+ line\(s\)/);
  });

  it("exits with the supervised turn (no --stay) after acknowledging the interrupt that ended it", async () => {
    radar = await fakeRadar();
    const config = parseRelayArgs(["codex-app-server", "--command", `node ${FAKE}`, "--prompt", "do it", "--poll-wait", "1s", "--flush-interval", "20ms"], {
      RADAR_URL: radar.url,
      RADAR_TOKEN: "tok",
    }) as RelayConfig;
    const t = testIO();
    const done = runRelay(config, t.io, createLogger({ write: () => undefined }));
    const r = radar;
    await until(() => r.ingested.some((l) => l.includes("Reconnecting")));
    r.queue.push(directive("d1", "interrupt"));
    expect(await done).toBe(0);
    expect(r.acks).toEqual([{ id: "d1", body: expect.objectContaining({ result: "acknowledged" }) }]);
    expect(r.ingested.some((l) => l.includes('"status":"interrupted"'))).toBe(true);
  });
});
