/** Relay messages go to stderr (stdout is reserved for the agent's own output / directives in pipe mode). */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  debug(message: string): void;
}

export function createLogger(options: { quiet?: boolean; verbose?: boolean; write?: (text: string) => void } = {}): Logger {
  const write = options.write ?? ((text: string) => void process.stderr.write(text));
  const line = (level: string, message: string) => write(`[retry-radar relay]${level} ${message}\n`);
  return {
    info: (m) => {
      if (!options.quiet) line("", m);
    },
    warn: (m) => line(" warning:", m),
    error: (m) => line(" error:", m),
    debug: (m) => {
      if (options.verbose) line(" debug:", m);
    },
  };
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {}, debug() {} };

/** Durations in log lines: "4s", "1.5s", "250ms", "2m 5s" (the shared formatter's compact spelling). */
export { compactDuration as formatDuration } from "../../lib/retry/duration";
