/**
 * `relay codex-exec` and `relay claude`: run the agent as a child process, echo its stdout,
 * forward every JSON line to the radar with its receive time, and carry out `interrupt` by
 * ending the process gracefully (SIGINT, then SIGTERM, then SIGKILL, `--kill-grace` apart).
 */
import type { RelayConfig } from "../args";
import { RelayCore, resolveBin } from "../core";
import type { DirectiveOutcome } from "../directives";
import { LineSplitter } from "../lines";
import type { Logger } from "../log";
import { agentEnv, describeExit, endProcess, exitCodeOf, exitOf, resolveClaude, spawnAgent } from "../process";
import type { RelayIO } from "../io";

export async function runChildMode(config: RelayConfig, io: RelayIO, log: Logger): Promise<number> {
  const isClaude = config.mode === "claude";
  const name = isClaude ? "claude" : "codex exec";
  const bin = isClaude ? resolveClaude() : resolveBin("codex");
  const baseArgs = isClaude ? ["-p", "--output-format", "stream-json", "--verbose"] : ["exec", "--json"];
  const args = config.command ? config.agentArgs : [...baseArgs, ...config.agentArgs];
  log.debug(`starting ${config.command ?? bin} ${args.join(" ")}`);

  const child = spawnAgent(config.command, bin, args, {
    cwd: config.cwd ?? process.cwd(),
    stdio: [io.stdinForChild, "pipe", "pipe"],
    env: agentEnv(),
  });
  child.stderr!.on("data", (chunk) => io.stderr.write(chunk));
  let ending: Promise<Awaited<ReturnType<typeof endProcess>>> | null = null;
  let endedByDirective = false;

  const core = new RelayCore(config, log, {
    context: () => ({ childRunning: child.exitCode === null && child.signalCode === null }),
    execute: async (d, action): Promise<DirectiveOutcome | null> => {
      if (action.type !== "end-process") return { result: "failed", detail: `cannot ${action.type} in ${config.mode} mode` };
      endedByDirective = true;
      ending ??= endProcess(child, config.killGraceMs, "SIGINT");
      const ended = await ending;
      return { result: "acknowledged", detail: `${name} exited (${describeExit(ended)}) after ${ended.after}` };
    },
  });

  const splitter = new LineSplitter();
  const onLine = (line: string, receivedAt: number) =>
    core.takeLine(line, receivedAt, (reason) => log.debug(`not forwarded (${reason}): ${line.slice(0, 200)}`));
  child.stdout!.on("data", (chunk: Buffer) => {
    const receivedAt = Date.now();
    io.stdout.write(chunk);
    for (const line of splitter.push(chunk)) onLine(line, receivedAt);
  });
  const stdoutClosed = new Promise<void>((resolve) => child.stdout!.on("close", resolve));
  let spawnError: Error | null = null;
  child.on("error", (error) => {
    spawnError = error;
    log.error(`could not start ${name}: ${error.message}`);
  });

  core.start();

  const stopSignal = io.onSignal((signal) => {
    if (ending) {
      log.warn(`${signal} again: killing ${name}`);
      child.kill("SIGKILL");
      return;
    }
    log.info(`${signal}: ending ${name} and flushing`);
    ending = endProcess(child, config.killGraceMs, "SIGINT");
  });

  const exit = spawnError ? { code: 127, signal: null } : await exitOf(child);
  await Promise.race([stdoutClosed, new Promise((r) => setTimeout(r, 1_000))]);
  for (const line of splitter.end()) onLine(line, Date.now());
  stopSignal();
  log.info(`${name} exited (${describeExit(exit)})${endedByDirective ? " — ended by a radar directive" : ""}`);
  if (core.skipped) log.debug(`${core.skipped} stdout line(s) were not JSON and were not forwarded`);
  const report = await core.shutdown();
  if (report.undelivered) return 75;
  return exitCodeOf(exit);
}
