#!/usr/bin/env -S npx tsx
/** `npm run relay -- <mode> [options] [-- agent args]` (see USAGE in args.ts). */
import { parseRelayArgs, USAGE, UsageError } from "./args";
import { runRelay } from "./relay";

async function main(): Promise<number> {
  let config;
  try {
    config = parseRelayArgs(process.argv.slice(2));
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`retry-radar relay: ${error.message}\n\n${USAGE}`);
      return 2;
    }
    throw error;
  }
  if (config === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  return runRelay(config);
}

main().then(
  (code) => {
    process.exitCode = code;
    // Undici keep-alive sockets and stdin must not keep the process up.
    setTimeout(() => process.exit(code), 200).unref();
    if (process.stdin.readable) process.stdin.destroy();
  },
  (error) => {
    process.stderr.write(`retry-radar relay: ${error?.stack ?? error}\n`);
    process.exit(1);
  },
);
