/** What the relay reads and writes: its own stdio and signals, or a test's streams (own file, so modes and the relay do not import each other). */
import type { Readable, Writable } from "node:stream";

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
