/**
 * The relay's ingest token never enters its own environment or command line, where the agent it
 * supervises could read it (/proc/<relay pid>/environ and cmdline; cmdline is readable by every
 * local user). The relay runs in `claude` mode against the built app, supervising a prying agent
 * (scripts/relay/test-fixtures/prying-agent.mjs) that reads its own environment and its
 * ancestors' environ and cmdline. The token is given with --token-file or --token-stdin; the old
 * --token is the control that shows what the checks catch.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PATIENCE_MS } from "../support/patience";
import { ROOT, removeTempDirs, startRelay, tempDir, waitFor, withTimeout, type RelayProcess } from "../support/relay-helpers";
import { threadDetail } from "../support/relay-radar";
import { startServer, type RunningServer } from "../support/server";

const AGENT = path.join(ROOT, "scripts", "relay", "test-fixtures", "prying-agent.mjs");

let server: RunningServer;
let relay: RelayProcess | null = null;

beforeAll(async () => {
  server = await startServer();
});
afterEach(async () => {
  if (relay && relay.child.exitCode === null) {
    relay.kill("SIGKILL");
    await relay.exited;
  }
  relay = null;
});
afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});

interface Report {
  env: Record<string, string>;
  ancestors: { pid: number; environ: string; cmdline: string }[];
}

/**
 * Runs the relay with `tokenArgs` over the prying agent, waits until the radar stored the
 * agent's first line (so the relay read the token and was let in), and returns what the relay's
 * /proc entries and the agent's report hold.
 */
async function superviseProbe(tokenArgs: string[], stdin?: string) {
  const dir = tempDir("radar-relay-token-");
  const report = path.join(dir, "report.json");
  const session = `token-probe-${Math.random().toString(36).slice(2)}`;
  relay = startRelay(["claude", "--server", server.url, ...tokenArgs, "--command", `exec node ${AGENT}`, "--flush-interval", "50ms", "--poll-wait", "1s", "--", session], {
    env: { AGENT_REPORT: report },
    stdin: stdin === undefined ? "ignore" : "pipe",
  });
  if (stdin !== undefined) {
    relay.write(stdin);
    relay.end();
  }
  const r = relay;
  const stored = waitFor(async () => (await threadDetail(server, session))?.thread.agent === "claude-code", PATIENCE_MS, () => r.stderr());
  const gaveUp = r.exited.then((e) => Promise.reject(new Error(`the relay exited (${e.code ?? e.signal}) before the radar stored a line:\n${r.stderr()}`)));
  await Promise.race([stored, gaveUp]);
  const pid = r.child.pid!;
  const relayProc = { environ: fs.readFileSync(`/proc/${pid}/environ`, "latin1"), cmdline: fs.readFileSync(`/proc/${pid}/cmdline`, "latin1") };
  const agent = JSON.parse(fs.readFileSync(report, "utf8")) as Report;
  r.kill("SIGINT");
  const exit = await withTimeout(r.exited, PATIENCE_MS, "relay exit");
  return { pid, relayProc, agent, exit, stderr: r.stderr() };
}

describe("the relay's ingest token", () => {
  it("given with --token-file, is in neither the relay's environ nor its cmdline, nor anywhere the agent looked", async () => {
    const file = path.join(tempDir("radar-relay-token-file-"), "token");
    fs.writeFileSync(file, `${server.token}\n`, { mode: 0o600 });
    const seen = await superviseProbe(["--token-file", file]);
    expect(seen.relayProc.cmdline).toContain("--token-file");
    expect(seen.relayProc.environ).not.toContain(server.token);
    expect(seen.relayProc.cmdline).not.toContain(server.token);
    // The agent did read its parent's entries (the relay, or the shell that runs --command).
    expect(seen.agent.ancestors.some((a) => a.pid === seen.pid && a.environ.includes("AGENT_REPORT"))).toBe(true);
    expect(JSON.stringify(seen.agent)).not.toContain(server.token);
    expect(seen.stderr).not.toMatch(/warning/);
    expect(seen.exit.code, seen.stderr).toBe(0);
  });

  it("given on standard input, leaks nowhere either", async () => {
    const seen = await superviseProbe(["--token-stdin"], `${server.token}\n`);
    expect(seen.relayProc.environ).not.toContain(server.token);
    expect(seen.relayProc.cmdline).not.toContain(server.token);
    expect(JSON.stringify(seen.agent)).not.toContain(server.token);
    expect(seen.stderr).not.toMatch(/warning/);
  });

  it("given with the deprecated --token, is in the cmdline the agent reads, and the relay warns so", async () => {
    const seen = await superviseProbe(["--token", server.token]);
    expect(seen.relayProc.cmdline).toContain(server.token);
    expect(seen.agent.ancestors.find((a) => a.pid === seen.pid)?.cmdline).toContain(server.token);
    expect(seen.stderr).toMatch(/warning: --token puts the token in the command line.*--token-file PATH.*--token-stdin/);
  });

  it("refuses a token file that others may read, before starting anything", async () => {
    const file = path.join(tempDir("radar-relay-token-file-"), "token");
    fs.writeFileSync(file, `${server.token}\n`);
    fs.chmodSync(file, 0o644);
    relay = startRelay(["claude", "--server", server.url, "--token-file", file, "--command", `node ${AGENT}`]);
    const exit = await withTimeout(relay.exited, PATIENCE_MS, "relay exit");
    expect(exit.code).toBe(2);
    expect(relay.stderr()).toContain(`retry-radar relay: --token-file ${file}: mode 0644 lets other users read or change it; run \`chmod 600 ${file}\``);
  });
});
