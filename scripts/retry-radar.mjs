#!/usr/bin/env node
// `retry-radar <command> …` — the package's bin entry (npx retry-radar relay …).
//   retry-radar relay <mode> [options] [-- agent args]   (scripts/relay/cli.ts)
//   retry-radar demo [options]                           (scripts/demo/cli.ts)
// The commands are TypeScript, loaded in this process through tsx's ESM loader.
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const commands = {
  relay: path.join(here, "relay", "cli.ts"),
  demo: path.join(here, "demo", "cli.ts"),
};

const [command, ...rest] = process.argv.slice(2);
if (!command || command === "-h" || command === "--help" || !(command in commands)) {
  const out = command && !(command in commands) && command !== "-h" && command !== "--help" ? process.stderr : process.stdout;
  if (out === process.stderr) out.write(`retry-radar: unknown command "${command}"\n\n`);
  out.write(
    "Usage: retry-radar relay <codex-app-server|codex-exec|claude|pipe> [options] [-- agent args]\n" +
      "       retry-radar demo [--server URL] [--token-file PATH | --token-stdin] [--seed N] [--speed X]\n" +
      "Run `retry-radar relay --help` for the relay's options.\n",
  );
  process.exit(out === process.stderr ? 2 : 0);
}

try {
  const { register } = await import("tsx/esm/api");
  register();
} catch (error) {
  process.stderr.write(`retry-radar: cannot load TypeScript (the "tsx" package is missing: npm install tsx): ${error.message}\n`);
  process.exit(1);
}
// The command sees its own arguments as if it were run directly.
process.argv = [process.argv[0], commands[command], ...rest];
await import(pathToFileURL(commands[command]).href);
