/**
 * Killing the server while the relay runs loses nothing: lines that arrive during the outage
 * are buffered (spilling to disk past --memory-limit), the relay says so on stderr, and after
 * the restart (same database) every one of them arrives exactly once. A response lost after the
 * server committed is retried with byte-identical lines and counted as duplicates, not stored
 * twice. The relay runs in pipe mode (codex app-server format) behind a TCP proxy that keeps
 * the server's address fixed across the restart.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PATIENCE_MS } from "../support/patience";
import { removeTempDirs, startRelay, tempDir, waitFor, withTimeout, type RelayProcess } from "../support/relay-helpers";
import { startTcpProxy, type TcpProxy } from "../support/relay-proxy";
import { probesStored, threadDetail } from "../support/relay-radar";
import { startServer, type RunningServer } from "../support/server";

let server: RunningServer;
let proxy: TcpProxy;
let relay: RelayProcess | null = null;

const THREAD = `buffer-thread-${Date.now().toString(36)}`;
const TURN = `${THREAD}-turn`;
const portOf = (url: string) => Number(new URL(url).port);

beforeAll(async () => {
  proxy = await startTcpProxy();
  server = await startServer({ RADAR_PUBLIC_URL: proxy.url });
  await proxy.up(portOf(server.url));
});

afterAll(async () => {
  if (relay && relay.child.exitCode === null) relay.kill("SIGKILL");
  await Promise.all([server?.stop(), proxy?.close()]);
  removeTempDirs();
});

/** A distinct, individually stored line (an unknown Codex method is kept as its own event). */
const probe = (n: number) =>
  JSON.stringify({ method: "radarTest/probe", params: { threadId: THREAD, turnId: TURN, n, pad: "x".repeat(200) } });

const probes = () => probesStored(server, THREAD);

describe("relay buffering across a server outage", () => {
  it("delivers every event buffered while the server was down exactly once after its restart", async () => {
    const spool = tempDir("radar-relay-spool-");
    relay = startRelay(
      ["pipe", "--format", "codex", "--server", proxy.url, "--token", server.token, "--directives", "none", "--flush-interval", "50ms", "--memory-limit", "4kb", "--spool", spool, "--flush-timeout", "120s"],
      { stdin: "pipe" },
    );
    const r = relay;
    const send = (line: string) => r.write(`${line}\n`);
    send(JSON.stringify({ method: "thread/started", params: { thread: { id: THREAD, modelProvider: "openai", cwd: "/tmp" } } }));
    send(JSON.stringify({ method: "turn/started", params: { threadId: THREAD, turn: { id: TURN, status: "inProgress", items: [] } } }));
    for (let n = 0; n < 20; n++) send(probe(n));
    await waitFor(async () => (await probes()).length === 20, PATIENCE_MS, () => r.stderr());

    // Outage: the server dies; the agent keeps writing.
    await server.stop();
    await proxy.down();
    for (let n = 20; n < 80; n++) send(probe(n));
    await waitFor(() => /radar unreachable \(.*\), 60 events buffered \(\d+ on disk in [^)]+\), retrying in/.test(r.stderr()), PATIENCE_MS, () => r.stderr());
    expect(fs.readdirSync(spool).some((f) => f.endsWith(".spool.ndjson"))).toBe(true);
    for (let n = 80; n < 100; n++) send(probe(n));

    // Restart on the same database; the relay notices by itself.
    await server.restart();
    await proxy.up(portOf(server.url));
    await waitFor(() => /radar reachable again/.test(r.stderr()), PATIENCE_MS, () => r.stderr());
    await waitFor(async () => (await probes()).length >= 100, PATIENCE_MS, () => r.stderr());

    // A response lost after the server committed: the batch is re-sent and counted as duplicates.
    proxy.dropNextResponses(1);
    for (let n = 100; n < 110; n++) send(probe(n));
    await waitFor(() => proxy.dropped >= 1, PATIENCE_MS, () => r.stderr());
    send(JSON.stringify({ method: "turn/completed", params: { threadId: THREAD, turn: { id: TURN, status: "completed", error: null } } }));
    r.end();
    const exit = await withTimeout(r.exited, PATIENCE_MS, "relay exit");
    expect(exit.code, r.stderr()).toBe(0);

    const stored = await probes();
    expect(stored).toHaveLength(110);
    expect(new Set(stored).size).toBe(110);
    expect([...stored].sort((a, b) => a - b)).toEqual(Array.from({ length: 110 }, (_, i) => i));
    const view = await threadDetail(server, THREAD);
    expect(view!.thread.status).toBe("completed");

    // The relay's own account: 113 lines sent; the batch whose response was lost was stored on its
    // first trip and counted as duplicates on its second — accepted + duplicates = 113.
    const summary = /forwarded (\d+) line\(s\) to \S+ \((\d+) accepted, (\d+) duplicates\)/.exec(r.stderr());
    expect(summary, r.stderr()).not.toBeNull();
    const [, forwarded, accepted, duplicates] = summary!.map(Number);
    expect(forwarded).toBe(113);
    expect(duplicates).toBeGreaterThanOrEqual(1);
    expect(accepted + duplicates).toBe(113);
    expect(r.stderr()).not.toMatch(/NOT delivered|could not deliver/);
    // The disk spool is cleaned up once delivered (an empty spool dir is removed).
    expect(fs.existsSync(spool) ? fs.readdirSync(spool) : []).toEqual([]);
  });

  it("on exit while the server is still down, saves the undelivered events to a replayable file", async () => {
    const spool = tempDir("radar-relay-spool-");
    await proxy.down();
    const thread = `${THREAD}-b`;
    const r = startRelay(["pipe", "--format", "codex", "--server", proxy.url, "--token", server.token, "--directives", "none", "--spool", spool, "--flush-timeout", "1s"], {
      stdin: "pipe",
    });
    relay = r;
    const lines = Array.from({ length: 5 }, (_, n) => JSON.stringify({ method: "radarTest/probe", params: { threadId: thread, n } }));
    r.write(lines.join("\n") + "\n");
    r.end();
    const exit = await withTimeout(r.exited, PATIENCE_MS, "relay exit");
    expect(exit.code).toBe(75);
    const file = /saved in (\S+undelivered-codex-\S+\.ndjson)/.exec(r.stderr())?.[1];
    expect(file, r.stderr()).toBeTruthy();
    const saved = fs.readFileSync(file!, "utf8").trim().split("\n");
    expect(saved).toHaveLength(5);
    expect(JSON.parse(saved[0])).toMatchObject({ at: expect.any(Number), message: { method: "radarTest/probe", params: { n: 0 } } });

    // Replaying the file later delivers them with their original receive times.
    await proxy.up(portOf(server.url));
    const replay = startRelay(["pipe", "--format", "codex", "--server", server.url, "--token", server.token, "--directives", "none"], { stdin: "pipe" });
    relay = replay;
    replay.write(fs.readFileSync(file!, "utf8"));
    replay.end();
    expect((await withTimeout(replay.exited, PATIENCE_MS, "replay exit")).code, replay.stderr()).toBe(0);
    const view = await threadDetail(server, thread);
    const events = view!.events.filter((e) => e.nativeType === "radarTest/probe");
    expect(events).toHaveLength(5);
    expect(events.every((e: any) => Date.parse(e.at) === JSON.parse(saved[0]).at)).toBe(true);
  });
});
