/** Starting and ending agent processes. */
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { PROJECT_ROOT, resolveBin } from "./core";

/** Variables only the relay may see: an agent under prompt injection must not be able to acknowledge its own Stop. */
const RELAY_ONLY = ["RADAR_TOKEN"];

/** The supervised agent's environment: the relay's own, less the radar's credentials. */
export function agentEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const copy = { ...env };
  for (const name of RELAY_ONLY) delete copy[name];
  return copy;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export function exitOf(child: ChildProcess): Promise<Exit> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
}

export function describeExit(exit: Exit): string {
  return exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
}

/** Exit code for the relay from its agent's exit. */
export function exitCodeOf(exit: Exit): number {
  if (exit.code !== null) return exit.code;
  const numbers: Record<string, number> = { SIGINT: 2, SIGTERM: 15, SIGKILL: 9, SIGHUP: 1 };
  return 128 + (exit.signal ? (numbers[exit.signal] ?? 1) : 1);
}

/**
 * Ends a process gracefully: `first` (SIGINT), then SIGTERM after `graceMs`, then SIGKILL after
 * another `graceMs`. Resolves with how it exited and which signal ended it.
 */
export async function endProcess(child: ChildProcess, graceMs: number, first: NodeJS.Signals | "close-stdin" = "SIGINT"): Promise<Exit & { after: string }> {
  const exited = exitOf(child);
  const steps: (NodeJS.Signals | "close-stdin")[] = [first, "SIGTERM", "SIGKILL"];
  for (const step of steps) {
    if (child.exitCode !== null || child.signalCode !== null) break;
    if (step === "close-stdin") child.stdin?.end();
    else child.kill(step);
    const result = await Promise.race([exited, new Promise<null>((r) => setTimeout(() => r(null), step === "SIGKILL" ? 5_000 : graceMs))]);
    if (result) return { ...result, after: step === "close-stdin" ? "closing its stdin" : step };
  }
  const result = await exited;
  return { ...result, after: "SIGKILL" };
}

export function spawnAgent(command: string | null, bin: string, args: string[], options: SpawnOptions): ChildProcess {
  if (command) {
    // A user-given command line, run by the shell; agent args are appended (quoted).
    const quoted = args.map((a) => (/^[\w./:=@%+-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`));
    return spawn([command, ...quoted].join(" "), { ...options, shell: true });
  }
  return spawn(bin, args, options);
}

/**
 * The `claude` binary. npm's `@anthropic-ai/claude-code` puts a placeholder at bin/claude.exe
 * that its postinstall replaces with the native binary; when install scripts did not run, use
 * the platform package's binary directly.
 */
export function resolveClaude(): string {
  const bin = resolveBin("claude");
  try {
    const real = fs.realpathSync(bin);
    if (fs.statSync(real).size > 1024 * 1024) return bin;
    const platform = `${process.platform}-${process.arch}`;
    for (const suffix of ["", "-musl"]) {
      const candidate = path.join(PROJECT_ROOT, "node_modules", "@anthropic-ai", `claude-code-${platform}${suffix}`, "claude");
      if (fs.existsSync(candidate)) return candidate;
    }
  } catch {
    // fall through: PATH
  }
  return bin;
}
