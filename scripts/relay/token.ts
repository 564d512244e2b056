/**
 * Where the relay (and the demo) get the source's ingest token without putting it where the
 * supervised agent can read it. A process's starting environment and argument list stay readable
 * in /proc/<pid>/environ and /proc/<pid>/cmdline for its whole life (cmdline by every local
 * user), so a token passed as `--token` or `RADAR_TOKEN` is exposed whatever the relay does
 * afterwards. `--token-file` (a file only its owner may read) and `--token-stdin` keep it out of
 * both; the old ways still work, with a warning that names the leak.
 */
import fs from "node:fs";

export class TokenError extends Error {}

/** The token in a file's or stream's text: one line, a final newline allowed. */
export function tokenOfText(text: string, where: string): string {
  const token = text.replace(/\r?\n$/, "");
  if (!token.trim()) throw new TokenError(`${where} is empty: expected the source's ingest token`);
  if (/\s/.test(token)) throw new TokenError(`${where} must hold only the token, on one line (found whitespace in it)`);
  return token;
}

/**
 * Reads a token file, refusing one that its group or others may read or write: it would leak
 * the token to every local user, which is what the file is there to prevent. It must be a regular
 * file owned by the relay's effective user (`euid`): another user's file, even of mode 0600, is
 * theirs to read or replace. Opened without blocking, so a FIFO put in its place is refused
 * rather than waited on. Type, owner and mode are checked on the descriptor that is read, so the
 * file cannot be swapped in between.
 */
export function readTokenFile(file: string, euid: number | undefined = process.geteuid?.()): string {
  const where = `--token-file ${file}`;
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOCTTY | fs.constants.O_NONBLOCK);
  } catch (error) {
    throw new TokenError(`${where}: cannot open it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new TokenError(`${where}: not a regular file`);
    if (euid !== undefined && stat.uid !== euid) {
      throw new TokenError(`${where}: owned by uid ${stat.uid}, not by the relay's user (uid ${euid}); run \`chown ${euid} ${file}\` or use a file of your own`);
    }
    const mode = stat.mode & 0o777;
    if (mode & 0o077) {
      throw new TokenError(`${where}: mode ${mode.toString(8).padStart(4, "0")} lets other users read or change it; run \`chmod 600 ${file}\``);
    }
    return tokenOfText(fs.readFileSync(fd, "utf8"), where);
  } finally {
    fs.closeSync(fd);
  }
}

/** All of standard input, as text. */
export const readStandardInput = (): string => fs.readFileSync(0, "utf8");

/** Reads the token from standard input, to its end (`--token-stdin`). */
export function readTokenStdin(read: () => string = readStandardInput): string {
  let text: string;
  try {
    text = read();
  } catch (error) {
    throw new TokenError(`--token-stdin: cannot read standard input (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  return tokenOfText(text, "--token-stdin: standard input");
}

export type TokenOrigin = "file" | "stdin" | "flag" | "env";

export interface TokenChoice {
  token: string;
  origin: TokenOrigin;
  /** What an operator should hear about where the token is exposed (printed on stderr). */
  warnings: string[];
}

const SAFER = "pass it with --token-file PATH (a file of mode 0600) or --token-stdin instead";

/**
 * The token from `--token-file`, `--token-stdin` (`readStdin` gives standard input's text), or
 * `--token`, at most one of them; else from the first of the variables `envNames` set in `env`.
 * `null` when none gave one.
 */
export function chooseToken(
  options: { tokenFile?: string; tokenStdin?: boolean; token?: string },
  env: Record<string, string | undefined>,
  envNames: readonly string[],
  readStdin: () => string = readStandardInput,
): TokenChoice | null {
  const given = [options.tokenFile !== undefined && "--token-file", options.tokenStdin && "--token-stdin", options.token !== undefined && "--token"].filter(Boolean);
  if (given.length > 1) throw new TokenError(`${given.join(" and ")}: give the token one way only`);
  const inEnv = envNames.find((name) => env[name]);
  const warnings: string[] = [];
  // Whatever the token's origin, a variable set at start stays in /proc/<pid>/environ.
  if (inEnv && given.length) {
    warnings.push(`${inEnv} is set in this process's environment, where a supervised agent (any process of your user) can read it (/proc/${process.pid}/environ) even though it is not used; unset it`);
  }
  if (options.tokenFile !== undefined) return { token: readTokenFile(options.tokenFile), origin: "file", warnings };
  if (options.tokenStdin) return { token: readTokenStdin(readStdin), origin: "stdin", warnings };
  if (options.token !== undefined) {
    warnings.push(`--token puts the token in the command line, which every local user can read, a supervised agent included (ps, /proc/${process.pid}/cmdline); ${SAFER}`);
    return { token: options.token, origin: "flag", warnings };
  }
  if (inEnv) {
    warnings.push(`${inEnv} puts the token in this process's environment, which a supervised agent (any process of your user) can read (/proc/${process.pid}/environ); ${SAFER}`);
    return { token: env[inEnv]!, origin: "env", warnings };
  }
  return null;
}
