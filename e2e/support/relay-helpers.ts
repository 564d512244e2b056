/**
 * Helpers for the relay end-to-end suites: temporary homes that point real Codex / Claude Code
 * at the mock provider, the relay CLI as a child process, and polling helpers.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { MockProvider } from "./mock-provider";

export const ROOT = path.resolve(import.meta.dirname, "..", "..");
const TSX_LOADER = path.join(ROOT, "node_modules", "tsx", "dist", "loader.mjs");
export const RELAY_CLI = path.join(ROOT, "scripts", "relay", "cli.ts");
/** The package's bin (`npx retry-radar relay …`), which loads the same CLI in its own process. */
export const PACKAGE_BIN = path.join(ROOT, "scripts", "retry-radar.mjs");

const temps: string[] = [];
const children = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of children) child.kill("SIGKILL");
  for (const dir of temps) fs.rmSync(dir, { recursive: true, force: true });
});

/** Removes the temporary dirs made so far (call from afterAll; also done at process exit). */
export function removeTempDirs(): void {
  for (const dir of temps.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  temps.push(dir);
  return dir;
}

/** CODEX_HOME with a config.toml whose model provider is the mock (protocols.md), plus a work dir. */
export function codexEnv(mock: MockProvider): { env: Record<string, string>; home: string; cwd: string } {
  const home = tempDir("radar-codex-home-");
  const cwd = tempDir("radar-codex-work-");
  fs.writeFileSync(
    path.join(home, "config.toml"),
    [
      `model = "gpt-5.5"`,
      `model_provider = "mock"`,
      `[model_providers.mock]`,
      `name = "mock"`,
      `base_url = "${mock.openaiBaseUrl}"`,
      `wire_api = "responses"`,
      `env_key = "MOCK_API_KEY"`,
      "",
    ].join("\n"),
  );
  return { env: { CODEX_HOME: home, MOCK_API_KEY: "mock-key", RUST_LOG: "error" }, home, cwd };
}

/** HOME / CLAUDE_CONFIG_DIR in a temp dir, ANTHROPIC_BASE_URL at the mock, a dummy key. */
export function claudeEnv(mock: MockProvider): { env: Record<string, string>; cwd: string } {
  const home = tempDir("radar-claude-home-");
  const cwd = tempDir("radar-claude-work-");
  return {
    env: {
      HOME: home,
      CLAUDE_CONFIG_DIR: path.join(home, ".claude"),
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_API_KEY: "sk-ant-mock-key",
      DISABLE_AUTOUPDATER: "1",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_TELEMETRY: "1",
    },
    cwd,
  };
}

export interface RelayProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Writes to the relay's stdin (pipe mode). */
  write(text: string): void;
  end(): void;
  kill(signal?: NodeJS.Signals): void;
}

/** Runs `relay <args>` (scripts/relay/cli.ts under tsx, or through the package's bin) as its own process. */
export function startRelay(args: string[], options: { env?: Record<string, string>; cwd?: string; stdin?: "pipe" | "ignore"; viaBin?: boolean } = {}): RelayProcess {
  const command = options.viaBin ? [PACKAGE_BIN, "relay", ...args] : ["--import", TSX_LOADER, RELAY_CLI, ...args];
  const child = spawn(process.execPath, command, {
    cwd: options.cwd ?? ROOT,
    // A state directory of its own, so the default spool never mixes with another run's.
    env: { ...process.env, RADAR_URL: "", RADAR_TOKEN: "", XDG_STATE_HOME: tempDir("radar-relay-state-"), ...options.env },
    stdio: [options.stdin ?? "ignore", "pipe", "pipe"],
  });
  children.add(child);
  let out = "";
  let err = "";
  child.stdout!.on("data", (c) => (out += c));
  child.stderr!.on("data", (c) => {
    err += c;
    if (process.env.RELAY_TEST_VERBOSE === "1") process.stderr.write(c);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    write: (text) => void child.stdin!.write(text),
    end: () => void child.stdin!.end(),
    kill: (signal = "SIGTERM") => void child.kill(signal),
  };
}

/** Polls `probe` until it returns a truthy value; throws with `describe()` on timeout. */
export async function waitFor<T>(probe: () => Promise<T | null | undefined | false> | T | null | undefined | false, timeoutMs: number, describe: () => string | Promise<string> = () => "", intervalMs = 150): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value as T;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting${last ? ` (last error: ${(last as Error).message})` : ""}\n${await describe()}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer!);
  }
}
