/** `runRelay(config)`: the relay as a function (the CLI is a thin wrapper around it). */
import type { Readable, Writable } from "node:stream";
import type { RelayConfig } from "./args";
import { createLogger, type Logger } from "./log";
import { runAppServer } from "./modes/app-server";
import { runChildMode } from "./modes/child";
import { runPipe } from "./modes/pipe";

export interface RelayIO {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  /** What the agent child gets as stdin (codex-exec / claude). */
  stdinForChild: "inherit" | "ignore";
  /** Subscribe to SIGINT/SIGTERM; returns an unsubscribe function. */
  onSignal(handler: (signal: NodeJS.Signals) => void): () => void;
}

export function processIO(): RelayIO {
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    stdinForChild: "inherit",
    onSignal(handler) {
      const on = (signal: NodeJS.Signals) => handler(signal);
      process.on("SIGINT", on);
      process.on("SIGTERM", on);
      return () => {
        process.off("SIGINT", on);
        process.off("SIGTERM", on);
      };
    },
  };
}

export async function runRelay(config: RelayConfig, io: RelayIO = processIO(), log: Logger = createLogger(config)): Promise<number> {
  switch (config.mode) {
    case "codex-app-server":
      return runAppServer(config, io, log);
    case "codex-exec":
    case "claude":
      return runChildMode(config, io, log);
    case "pipe":
      return runPipe(config, io, log);
  }
}
