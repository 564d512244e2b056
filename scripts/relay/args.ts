/** `retry-radar relay <mode> [options] [-- agent args…]` → a validated RelayConfig. */
import path from "node:path";
import { parseArgs } from "node:util";
import { parseDuration as parseDurationText } from "../../lib/retry/duration";
import { isNativeFormat, NATIVE_FORMATS, type NativeFormat } from "../../lib/ingest/types";
import type { RelayMode } from "./directives";
import { defaultSpoolDir } from "./spool";
import { chooseToken, readStandardInput, TokenError } from "./token";

export const MODES: readonly RelayMode[] = ["codex-app-server", "codex-exec", "claude", "pipe"];

export interface RelayConfig {
  mode: RelayMode;
  server: string;
  token: string;
  /** Where the token was exposed (it came from --token or RADAR_TOKEN): said on stderr at start. */
  tokenWarnings: string[];
  /** A shell command to run instead of the default agent command. */
  command: string | null;
  /** Arguments after `--`, appended to the agent command. */
  agentArgs: string[];
  prompt: string | null;
  cwd: string | null;
  model: string | null;
  approvalPolicy: string;
  sandbox: string | null;
  /** app-server with --prompt: keep running after the supervised turn ends. */
  stay: boolean;
  format: NativeFormat;
  pipeDirectives: "print" | "none";
  killGraceMs: number;
  flushTimeoutMs: number;
  flushIntervalMs: number;
  batchLines: number;
  memoryLimitBytes: number;
  spoolDir: string;
  pollWaitSeconds: number;
  quiet: boolean;
  verbose: boolean;
}

export class UsageError extends Error {}

export const USAGE = `Usage: retry-radar relay <mode> [options] [-- agent arguments]
       npm run relay -- <mode> [options] [-- agent arguments]

Runs an AI coding agent (or reads its output), forwards everything it emits to Retry Radar,
and carries out the radar's directives (Stop retrying → interrupt, capacity recovery → continue).

Modes:
  codex-app-server   start \`codex app-server\` (or --command) and speak its JSON-RPC; with
                     --prompt it starts a thread and a turn and exits when the turn ends
  codex-exec         run \`codex exec --json <args after -->\`
  claude             run \`claude -p --output-format stream-json --verbose <args after -->\`
  pipe               forward lines from stdin (--format codex|codex-exec|claude)

Options:
  --server URL            Retry Radar server (default: $RADAR_URL)
  --token-file PATH       read the source's ingest token from PATH, a file only you may read
                          (mode 0600; refused when group or others have any access)
  --token-stdin           read the token from standard input (not in pipe mode)
  --token TOKEN           deprecated, as is $RADAR_TOKEN: the command line and the environment
                          are readable by the agent (/proc/<pid>/cmdline, environ); still
                          accepted, with a warning
  --command "CMD"         run this shell command instead of the default agent command
  --prompt "TEXT"         codex-app-server: start a thread and a turn with this prompt
  --cwd DIR               codex-app-server: working directory of the new thread
  --model NAME            codex-app-server: model for the new thread
  --approval-policy P     codex-app-server: never | on-request | untrusted (default never;
                          approval requests are declined since no one can answer them here)
  --sandbox MODE          codex-app-server: read-only | workspace-write | danger-full-access
  --stay                  codex-app-server: keep running after the prompted turn ends
  --format F              pipe: codex | codex-exec | claude
  --directives print|none pipe: print directives to stdout as JSON lines (default) or ignore them
  --kill-grace DURATION   time between SIGINT and SIGTERM (and SIGTERM and SIGKILL) when
                          ending an agent process (default 5s)
  --flush-timeout DUR     how long to keep trying to deliver buffered events at exit (default 10s)
  --flush-interval DUR    batching delay (default 200ms)
  --batch-lines N         lines per request at most (default 100)
  --memory-limit BYTES    buffered bytes kept in memory before spilling to disk (default 8mb)
  --spool DIR             private journal of events not yet delivered; a relay killed before delivering
                          them is resumed by the next relay on the same DIR (default: $XDG_STATE_HOME
                          or ~/.local/state, then retry-radar/relay)
  --quiet / --verbose     less / more on stderr
  -h, --help              this text

Durations: 500ms, 5s, 2m (a bare number is milliseconds).

Example — supervise one Codex task:
  mkdir -p ~/.config/retry-radar && (umask 077; printf '%s\\n' 'rr_…' > ~/.config/retry-radar/token)
  RADAR_URL=http://127.0.0.1:3000 npm run relay -- codex-app-server --token-file ~/.config/retry-radar/token \\
    --prompt "fix the failing test" --cwd .

Keeping the token from the agent, and running the agent as another user: scripts/relay/README.md
`;

/** A duration option: "500ms", "5s", "2m"; a bare number is milliseconds. */
export function parseDuration(text: string, name: string): number {
  const ms = parseDurationText(text, "ms");
  if (ms === null) throw new UsageError(`${name}: expected a duration such as 500ms, 5s or 2m, got "${text}"`);
  return Math.round(ms);
}

export function parseBytes(text: string, name: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|k|mb|m|gb|g)?$/i.exec(text.trim());
  if (!m) throw new UsageError(`${name}: expected a size such as 512kb or 8mb, got "${text}"`);
  const unit = (m[2] ?? "b").toLowerCase()[0];
  return Math.round(Number(m[1]) * (unit === "g" ? 1024 ** 3 : unit === "m" ? 1024 ** 2 : unit === "k" ? 1024 : 1));
}

function positiveInt(text: string, name: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${name}: expected a positive integer, got "${text}"`);
  return n;
}

/** `readStdin` gives the text `--token-stdin` reads the token from (standard input by default). */
export function parseRelayArgs(argv: string[], env: Record<string, string | undefined> = process.env, readStdin: () => string = readStandardInput): RelayConfig | "help" {
  const dash = argv.indexOf("--");
  const own = dash >= 0 ? argv.slice(0, dash) : argv;
  const agentArgs = dash >= 0 ? argv.slice(dash + 1) : [];
  let parsed;
  try {
    parsed = parseArgs({
      args: own,
      allowPositionals: true,
      strict: true,
      options: {
        server: { type: "string" },
        token: { type: "string" },
        "token-file": { type: "string" },
        "token-stdin": { type: "boolean" },
        command: { type: "string" },
        prompt: { type: "string" },
        cwd: { type: "string" },
        model: { type: "string" },
        "approval-policy": { type: "string" },
        sandbox: { type: "string" },
        stay: { type: "boolean" },
        format: { type: "string" },
        directives: { type: "string" },
        "kill-grace": { type: "string" },
        "flush-timeout": { type: "string" },
        "flush-interval": { type: "string" },
        "batch-lines": { type: "string" },
        "memory-limit": { type: "string" },
        spool: { type: "string" },
        "poll-wait": { type: "string" },
        quiet: { type: "boolean" },
        verbose: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const v = parsed.values;
  if (v.help) return "help";
  const [mode, ...extra] = parsed.positionals;
  if (!mode) throw new UsageError(`missing mode: one of ${MODES.join(", ")}`);
  if (!MODES.includes(mode as RelayMode)) throw new UsageError(`unknown mode "${mode}": use one of ${MODES.join(", ")}`);
  if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}" (agent arguments go after --)`);

  const server = v.server ?? env.RADAR_URL ?? "";
  if (!server) throw new UsageError("no server: pass --server URL or set RADAR_URL (e.g. http://127.0.0.1:3000)");
  try {
    const u = new URL(server);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("not http(s)");
  } catch {
    throw new UsageError(`--server: "${server}" is not an http(s) URL`);
  }
  // Standard input carries the agent's lines in pipe mode.
  if (v["token-stdin"] && mode === "pipe") throw new UsageError("--token-stdin: pipe mode reads the agent's lines from standard input; use --token-file PATH");
  let chosen;
  try {
    chosen = chooseToken({ tokenFile: v["token-file"], tokenStdin: v["token-stdin"], token: v.token }, env, ["RADAR_TOKEN"], readStdin);
  } catch (error) {
    if (error instanceof TokenError) throw new UsageError(error.message);
    throw error;
  }
  if (!chosen?.token) {
    throw new UsageError("no token: pass --token-file PATH (a file of mode 0600 holding the source's ingest token) or --token-stdin (--token and RADAR_TOKEN still work, but expose it to the agent)");
  }

  let format: NativeFormat;
  if (mode === "pipe") {
    if (!v.format) throw new UsageError(`pipe mode needs --format ${NATIVE_FORMATS.join("|")}`);
    if (!isNativeFormat(v.format)) throw new UsageError(`--format: use one of ${NATIVE_FORMATS.join(", ")}`);
    format = v.format;
  } else {
    format = mode === "codex-app-server" ? "codex" : mode === "codex-exec" ? "codex-exec" : "claude";
    if (v.format && v.format !== format) throw new UsageError(`--format is only for pipe mode (${mode} sends ${format})`);
  }
  if (v.prompt !== undefined && mode !== "codex-app-server") throw new UsageError(`--prompt is for codex-app-server mode; pass the prompt after -- in ${mode} mode`);
  const directives = v.directives ?? "print";
  if (directives !== "print" && directives !== "none") throw new UsageError(`--directives: use print or none`);
  const approvalPolicy = v["approval-policy"] ?? "never";
  if (!["never", "on-request", "untrusted", "on-failure"].includes(approvalPolicy)) throw new UsageError(`--approval-policy: use never, on-request or untrusted`);
  if (v.sandbox && !["read-only", "workspace-write", "danger-full-access"].includes(v.sandbox)) {
    throw new UsageError(`--sandbox: use read-only, workspace-write or danger-full-access`);
  }

  return {
    mode: mode as RelayMode,
    server: server.replace(/\/+$/, ""),
    token: chosen.token,
    tokenWarnings: chosen.warnings,
    command: v.command ?? null,
    agentArgs,
    prompt: v.prompt ?? null,
    cwd: v.cwd ? path.resolve(v.cwd) : null,
    model: v.model ?? null,
    approvalPolicy,
    sandbox: v.sandbox ?? null,
    stay: v.stay ?? false,
    format,
    pipeDirectives: directives,
    killGraceMs: v["kill-grace"] ? parseDuration(v["kill-grace"], "--kill-grace") : 5_000,
    flushTimeoutMs: v["flush-timeout"] ? parseDuration(v["flush-timeout"], "--flush-timeout") : 10_000,
    flushIntervalMs: v["flush-interval"] ? parseDuration(v["flush-interval"], "--flush-interval") : 200,
    batchLines: v["batch-lines"] ? positiveInt(v["batch-lines"], "--batch-lines") : 100,
    memoryLimitBytes: v["memory-limit"] ? parseBytes(v["memory-limit"], "--memory-limit") : 8 * 1024 * 1024,
    spoolDir: v.spool ? path.resolve(v.spool) : defaultSpoolDir(env),
    pollWaitSeconds: v["poll-wait"] ? Math.min(30, Math.max(1, Math.round(parseDuration(v["poll-wait"], "--poll-wait") / 1000))) : 25,
    quiet: v.quiet ?? false,
    verbose: v.verbose ?? false,
  };
}
