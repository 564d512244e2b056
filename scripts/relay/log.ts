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

/** "4s", "1.5s", "250ms", "2m 5s" — for human-facing messages. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 10_000) return `${Math.round(ms / 100) / 10}s`;
  if (ms < 60_000) return `${Math.round(ms / 1000)}s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return s ? `${m}m ${s}s` : `${m}m`;
}
