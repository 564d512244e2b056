// `npm run import -- <capture.jsonl> [--server URL] [--token TOKEN]`: replays a capture file
// through the same native endpoint an agent would use, keeping each line's original time, so an
// incident can be reconstructed. Re-importing is harmless (idempotency keys are derived).
import fs from "node:fs";
import { parseArgs } from "node:util";
import { CaptureParseError, parseCapture, type ParsedCapture } from "../lib/ingest";

const CHUNK = 500;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    server: { type: "string", default: process.env.RADAR_URL ?? "http://127.0.0.1:3000" },
    token: { type: "string", default: process.env.RADAR_TOKEN },
  },
});

function fail(message: string): never {
  process.stderr.write(`import: ${message}\n`);
  process.exit(1);
}

const [file] = positionals;
if (!file) fail("usage: npm run import -- <capture.jsonl> [--server URL] [--token TOKEN]");
if (!values.token) fail("no ingest token: pass --token or set RADAR_TOKEN");
if (!fs.existsSync(file)) fail(`no such file: ${file}`);

let capture: ParsedCapture;
try {
  capture = parseCapture(fs.readFileSync(file, "utf8"));
} catch (error) {
  if (error instanceof CaptureParseError) fail(`${file}: ${error.message}`);
  throw error;
}

let accepted = 0;
let duplicates = 0;
const rejected: string[] = [];

/** Posts items [start, start + count); a batch the server finds too large (413) is halved until it fits. */
async function send(start: number, count: number): Promise<void> {
  const chunk = capture.items.slice(start, start + count);
  const response = await fetch(`${values.server}/api/v1/ingest/${capture.format}`, {
    method: "POST",
    headers: { authorization: `Bearer ${values.token}`, "content-type": "application/json" },
    body: JSON.stringify(chunk),
  }).catch((error: Error) => fail(`cannot reach ${values.server}: ${error.message}`));
  const body = await response.json().catch(() => null);
  if (response.status === 413 && count > 1) {
    const half = Math.ceil(count / 2);
    await send(start, half);
    await send(start + half, count - half);
    return;
  }
  if (!response.ok && response.status !== 422) fail(`${response.status}: ${body?.detail ?? "request failed"}`);
  accepted += body.accepted;
  duplicates += body.duplicates;
  for (const item of body.rejected) rejected.push(`line item ${start + item.index}: ${item.error}`);
  if (body.rejectedOmitted > 0) rejected.push(`… and ${body.rejectedOmitted} more in items ${start}–${start + count - 1}`);
}

for (let start = 0; start < capture.items.length; start += CHUNK) await send(start, Math.min(CHUNK, capture.items.length - start));
process.stdout.write(
  `${file}: ${capture.format} capture, ${capture.items.length} lines sent (${capture.skipped} bookkeeping lines skipped): ` +
    `${accepted} accepted, ${duplicates} duplicates, ${rejected.length} rejected\n`,
);
for (const line of rejected) process.stdout.write(`  rejected ${line}\n`);
