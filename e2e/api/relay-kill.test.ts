/**
 * A relay killed with SIGKILL mid-run loses nothing it had taken: every line is in its journal
 * before it counts as taken, and the next relay started on the same spool directory sends what
 * the dead one had not delivered. The radar is made unreachable (a TCP proxy that stops
 * listening) so the killed relay certainly holds undelivered lines.
 */
import fs from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTempDirs, startRelay, tempDir, waitFor, withTimeout, type RelayProcess } from "../support/relay-helpers";
import { startTcpProxy, type TcpProxy } from "../support/relay-proxy";
import { probesStored } from "../support/relay-radar";
import { startServer, type RunningServer } from "../support/server";

let server: RunningServer;
let proxy: TcpProxy;
const relays: RelayProcess[] = [];

const THREAD = `kill-thread-${Date.now().toString(36)}`;
const portOf = (url: string) => Number(new URL(url).port);
/** Bounds that only stop a hung test: every wait below ends on an observable milestone. */
const HUNG = 90_000;

beforeAll(async () => {
  proxy = await startTcpProxy();
  server = await startServer({ RADAR_PUBLIC_URL: proxy.url });
  await proxy.up(portOf(server.url));
});

afterAll(async () => {
  for (const relay of relays) if (relay.child.exitCode === null) relay.kill("SIGKILL");
  await Promise.all([server?.stop(), proxy?.close()]);
  removeTempDirs();
});

const probe = (n: number) => JSON.stringify({ method: "radarTest/probe", params: { threadId: THREAD, n } });

const probes = () => probesStored(server, THREAD);

describe("a relay killed with SIGKILL", () => {
  it("is resumed by the next relay on the same spool directory: every line exactly once", async () => {
    const spool = tempDir("radar-relay-kill-");
    const args = ["pipe", "--format", "codex", "--server", proxy.url, "--token", server.token, "--directives", "none", "--flush-interval", "50ms", "--spool", spool];
    const first = startRelay(args, { stdin: "pipe" });
    relays.push(first);
    first.write(JSON.stringify({ method: "thread/started", params: { thread: { id: THREAD, modelProvider: "openai", cwd: "/tmp" } } }) + "\n");
    for (let n = 0; n < 20; n++) first.write(probe(n) + "\n");
    await waitFor(async () => (await probes()).length === 20, HUNG, () => first.stderr());

    // The radar goes away; the relay takes 40 more lines and says it holds them.
    await proxy.down();
    for (let n = 20; n < 60; n++) first.write(probe(n) + "\n");
    await waitFor(() => / 40 events buffered/.test(first.stderr()), HUNG, () => first.stderr());
    first.kill("SIGKILL");
    expect((await withTimeout(first.exited, HUNG, "killed relay")).signal).toBe("SIGKILL");
    expect(fs.readdirSync(spool).some((f) => f.endsWith(".spool.ndjson"))).toBe(true);

    // The radar is back; a new relay on the same spool directory sends what the dead one held.
    await proxy.up(portOf(server.url));
    const second = startRelay([...args, "--flush-timeout", "60s"], { stdin: "pipe" });
    relays.push(second);
    second.end();
    const exit = await withTimeout(second.exited, HUNG, "resuming relay");
    expect(exit.code, second.stderr()).toBe(0);
    expect(second.stderr()).toMatch(/resuming 40 event\(s\)/);

    const stored = await probes();
    expect([...stored].sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, n) => n));
    // Nothing is left behind once delivered.
    expect(fs.existsSync(spool) ? fs.readdirSync(spool) : []).toEqual([]);
  }, 180_000);
});
