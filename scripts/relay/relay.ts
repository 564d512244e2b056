/** `runRelay(config)`: the relay as a function (the CLI is a thin wrapper around it). */
import type { RelayConfig } from "./args";
import { processIO, type RelayIO } from "./io";
import { createLogger, type Logger } from "./log";
import { runAppServer } from "./modes/app-server";
import { runChildMode } from "./modes/child";
import { runPipe } from "./modes/pipe";

export async function runRelay(config: RelayConfig, io: RelayIO = processIO(), log: Logger = createLogger(config)): Promise<number> {
  for (const warning of config.tokenWarnings) log.warn(warning);
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

export { processIO, type RelayIO };
