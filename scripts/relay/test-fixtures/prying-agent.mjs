#!/usr/bin/env node
// A stand-in for `claude -p --output-format stream-json` that does what an agent under prompt
// injection could: it reads its own environment, the environment and command line of every
// process above it (the shell, the relay, …) and the file $AGENT_PEEK names (the relay's token
// file, say), and writes what it got to $AGENT_REPORT. Then it prints
// one Claude `system/init` line for the session named by its argument and waits for SIGINT.
import fs from "node:fs";

const read = (file) => {
  try {
    return fs.readFileSync(file, "latin1");
  } catch (error) {
    return `unreadable: ${error.code}`;
  }
};
const parentOf = (pid) => Number(read(`/proc/${pid}/stat`).replace(/^.*\)\s+\S+\s+/s, "").split(" ")[0]);

const ancestors = [];
for (let pid = process.ppid; pid > 1 && ancestors.length < 4; pid = parentOf(pid)) {
  ancestors.push({ pid, environ: read(`/proc/${pid}/environ`), cmdline: read(`/proc/${pid}/cmdline`) });
}
const peek = process.env.AGENT_PEEK ? read(process.env.AGENT_PEEK) : null;
fs.writeFileSync(process.env.AGENT_REPORT, JSON.stringify({ uid: process.getuid(), env: process.env, ancestors, peek }));

const session = process.argv[2];
process.stdout.write(JSON.stringify({ type: "system", subtype: "init", session_id: session, uuid: `${session}-init`, model: "claude-test" }) + "\n");
process.on("SIGINT", () => process.exit(0));
setInterval(() => undefined, 60_000);
