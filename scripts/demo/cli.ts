/**
 * `npm run demo -- [--server URL] [--token-file PATH | --token-stdin] [--seed N] [--speed X] [--duration 5m]`
 * Drives a running Retry Radar with a simulated fleet until Ctrl-C (see simulator.ts).
 */
import { parseArgs } from "node:util";
import { parseDuration } from "../relay/args";
import { chooseToken, TokenError } from "../relay/token";
import { runDemo } from "./simulator";

const USAGE = `Usage: npm run demo -- [options]

Simulates a fleet of AI coding agents (Codex, Claude Code, a recipe runner; OpenAI, Anthropic
and proxies) hitting rate limits, capacity storms, usage limits and stalls, and reports it to a
running Retry Radar through its public API. Stop retrying on the board reaches the simulated
agents. Deterministic given --seed.

Options:
  --server URL      the radar (default: $RADAR_URL or http://127.0.0.1:3000)
  --token-file PATH read the ingest token from PATH (a file of mode 0600)
  --token-stdin     read the ingest token from standard input
  --token TOKEN     deprecated, as are $RADAR_TOKEN and $RADAR_INGEST_TOKEN: other processes
                    can read the command line and the environment; accepted with a warning
  --seed N          scenario seed (default 1)
  --speed X         speed up the agents' work (retry waits stay real; default 1)
  --duration DUR    stop after DUR (e.g. 5m; default: until Ctrl-C)
  --run-tag TAG     fixes thread ids too (default: from the start time)
`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      server: { type: "string" },
      token: { type: "string" },
      "token-file": { type: "string" },
      "token-stdin": { type: "boolean" },
      seed: { type: "string" },
      speed: { type: "string" },
      duration: { type: "string" },
      "run-tag": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const server = values.server ?? process.env.RADAR_URL ?? "http://127.0.0.1:3000";
  let chosen;
  try {
    chosen = chooseToken({ tokenFile: values["token-file"], tokenStdin: values["token-stdin"], token: values.token }, process.env, ["RADAR_TOKEN", "RADAR_INGEST_TOKEN"]);
  } catch (error) {
    if (!(error instanceof TokenError)) throw error;
    process.stderr.write(`demo: ${error.message}\n`);
    return 2;
  }
  if (!chosen?.token) {
    process.stderr.write("demo: no token: pass --token-file PATH or --token-stdin (an ingest token from the Sources page)\n\n" + USAGE);
    return 2;
  }
  for (const warning of chosen.warnings) process.stderr.write(`[demo] warning: ${warning}\n`);
  const token = chosen.token;
  const seed = values.seed !== undefined ? Number(values.seed) : 1;
  const speed = values.speed !== undefined ? Number(values.speed) : 1;
  if (!Number.isInteger(seed)) throw new Error("--seed: expected an integer");
  if (!(speed > 0)) throw new Error("--speed: expected a positive number");
  const controller = new AbortController();
  const onSignal = () => {
    process.stderr.write("[demo] stopping…\n");
    controller.abort();
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  await runDemo({
    server,
    token,
    seed,
    speed,
    durationMs: values.duration ? parseDuration(values.duration, "--duration") : undefined,
    runTag: values["run-tag"],
    signal: controller.signal,
  });
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    process.stderr.write(`demo: ${error?.message ?? error}\n`);
    process.exit(1);
  },
);
