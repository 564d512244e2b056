/**
 * The relay's ingest token never enters its own environment or command line, where the agent it
 * supervises could read it (/proc/<relay pid>/environ and cmdline; cmdline is readable by every
 * local user). The relay runs in `claude` mode against the built app, supervising a prying agent
 * (scripts/relay/test-fixtures/prying-agent.mjs) that reads its own environment and its
 * ancestors' environ and cmdline. The token is given with --token-file or --token-stdin; the old
 * --token is the control that shows what the checks catch.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PATIENCE_MS } from "../support/patience";
import { PACKAGE_BIN, ROOT, removeTempDirs, startRelay, tempDir, waitFor, withTimeout, type RelayProcess } from "../support/relay-helpers";
import { threadDetail } from "../support/relay-radar";
import { get, startServer, type RunningServer } from "../support/server";

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
  uid: number;
  env: Record<string, string>;
  ancestors: { pid: number; environ: string; cmdline: string }[];
  /** The token file as the agent read it (or why it could not). */
  peek: string | null;
}

/**
 * Runs the relay with `tokenArgs` over the prying agent, waits until the radar stored the
 * agent's first line (so the relay read the token and was let in), and returns what the relay's
 * /proc entries and the agent's report hold.
 */
async function superviseProbe(tokenArgs: string[], options: { stdin?: string; viaBin?: boolean; asUser?: string } = {}) {
  const { stdin, viaBin = false, asUser = "" } = options;
  const dir = tempDir("radar-relay-token-");
  // The agent may run as another user, who writes its report here.
  fs.chmodSync(dir, 0o777);
  const report = path.join(dir, "report.json");
  const session = `token-probe-${Math.random().toString(36).slice(2)}`;
  const fileAt = tokenArgs.indexOf("--token-file");
  relay = startRelay(["claude", "--server", server.url, ...tokenArgs, "--command", `exec ${asUser}node ${AGENT}`, "--flush-interval", "50ms", "--poll-wait", "1s", "--", session], {
    env: { AGENT_REPORT: report, ...(fileAt >= 0 ? { AGENT_PEEK: tokenArgs[fileAt + 1] } : {}) },
    stdin: stdin === undefined ? "ignore" : "pipe",
    viaBin,
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

/** A token file only its owner may read, in a directory of its own. */
function tokenFile(): string {
  const file = path.join(tempDir("radar-relay-token-file-"), "token");
  fs.writeFileSync(file, `${server.token}\n`, { mode: 0o600 });
  return file;
}

describe("the relay's ingest token", () => {
  it("given with --token-file, is in neither the relay's environ nor its cmdline, nor anywhere else the agent looked", async () => {
    const seen = await superviseProbe(["--token-file", tokenFile()]);
    expect(seen.relayProc.cmdline).toContain("--token-file");
    expect(seen.relayProc.environ).not.toContain(server.token);
    expect(seen.relayProc.cmdline).not.toContain(server.token);
    // The agent did read the relay's entries (its parent: `exec` replaced the shell).
    expect(seen.agent.ancestors.some((a) => a.pid === seen.pid && a.environ.includes("AGENT_REPORT"))).toBe(true);
    expect(JSON.stringify({ ...seen.agent, peek: null })).not.toContain(server.token);
    // What the README says plainly: an agent of the same OS user can read the file itself.
    expect(seen.agent.peek).toBe(`${server.token}\n`);
    expect(seen.stderr).not.toMatch(/warning/);
    expect(seen.exit.code, seen.stderr).toBe(0);
  });

  // The README's recipe for a relay that runs as root (a service): the agent as another user.
  it.runIf(process.getuid?.() === 0)("run as another user (setpriv), the agent can read neither the token file nor the relay's environ, and SIGINT still reaches it", async () => {
    const seen = await superviseProbe(["--token-file", tokenFile()], { asUser: "setpriv --reuid=nobody --regid=nogroup --clear-groups " });
    expect(seen.agent.uid).toBe(65534);
    expect(seen.agent.peek).toBe("unreadable: EACCES");
    expect(seen.agent.ancestors.find((a) => a.pid === seen.pid)?.environ).toBe("unreadable: EACCES");
    expect(JSON.stringify(seen.agent)).not.toContain(server.token);
    expect(seen.exit.code, seen.stderr).toBe(0);
  });

  it("given on standard input (through the package's bin), leaks nowhere either", async () => {
    const seen = await superviseProbe(["--token-stdin"], { stdin: `${server.token}\n`, viaBin: true });
    expect(seen.relayProc.cmdline).toContain("retry-radar.mjs");
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

describe("the demo's ingest token", () => {
  it("given on standard input, as npm start -- --demo gives it, is in neither its environ nor its cmdline", async () => {
    const threads = async () => (await get(server, "/api/v1/threads?pageSize=200")).body.threads.length as number;
    const before = await threads();
    const { RADAR_TOKEN: _t, RADAR_INGEST_TOKEN: _i, ...env } = process.env;
    const demo = spawn(process.execPath, [PACKAGE_BIN, "demo", "--server", server.url, "--token-stdin", "--speed", "4", "--duration", "10m"], { cwd: ROOT, env, stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    demo.stderr!.on("data", (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => demo.once("exit", (code) => resolve(code)));
    try {
      demo.stdin!.end(`${server.token}\n`);
      // Its simulated agents reported: the demo read the token and was let in.
      const reported = waitFor(async () => (await threads()) > before, PATIENCE_MS, () => stderr);
      await Promise.race([reported, exited.then((code) => Promise.reject(new Error(`the demo exited (${code}) before reporting:\n${stderr}`)))]);
      expect(fs.readFileSync(`/proc/${demo.pid}/environ`, "latin1")).not.toContain(server.token);
      expect(fs.readFileSync(`/proc/${demo.pid}/cmdline`, "latin1")).not.toContain(server.token);
      expect(stderr).not.toMatch(/warning/);
    } finally {
      demo.kill("SIGINT");
      await withTimeout(exited, PATIENCE_MS, "demo exit");
    }
  });
});
