/**
 * `relay pipe --format codex|codex-exec|claude`: forwards the JSON lines of stdin (a harness
 * that already captures an agent's stream). Lines already wrapped as `{at, message}` are sent
 * as they are (so an undelivered-events file can be replayed byte-identically); others are
 * wrapped with their receive time. Directives are printed to stdout as JSON lines
 * (`--directives print`, the harness acts and acknowledges) or not polled (`none`).
 */
import type { RelayConfig } from "../args";
import { RelayCore } from "../core";
import { LineSplitter } from "../lines";
import type { Logger } from "../log";
import type { RelayIO } from "../io";

export async function runPipe(config: RelayConfig, io: RelayIO, log: Logger): Promise<number> {
  const core = new RelayCore(config, log, {
    context: () => ({}),
    execute: async (d, action) => {
      if (action.type === "print") io.stdout.write(`${JSON.stringify(d)}\n`);
      return null; // the harness acknowledges
    },
  });
  const splitter = new LineSplitter();
  const onLine = (line: string, receivedAt: number) =>
    core.takeLine(line, receivedAt, (reason, skipped) => {
      if (skipped <= 5) log.warn(`stdin line not forwarded (${reason}): ${line.slice(0, 120)}`);
    });

  core.start();
  const ended = new Promise<string>((resolve) => {
    io.stdin.on("data", (chunk: Buffer) => {
      const receivedAt = Date.now();
      for (const line of splitter.push(chunk)) onLine(line, receivedAt);
    });
    io.stdin.on("end", () => resolve("eof"));
    io.stdin.on("error", () => resolve("eof"));
  });
  const signalled = new Promise<string>((resolve) => {
    const off = io.onSignal((signal) => {
      off();
      log.info(`${signal}: flushing and exiting`);
      resolve("signal");
    });
    void ended.then(off);
  });
  const reason = await Promise.race([ended, signalled]);
  for (const line of splitter.end()) onLine(line, Date.now());
  if (core.skipped > 5) log.warn(`${core.skipped} stdin lines in all were not JSON objects and were not forwarded`);
  const report = await core.shutdown();
  if (report.undelivered) return 75;
  return reason === "signal" ? 130 : 0;
}
