/**
 * Capture files (../shared/fixtures/real-clients/*.jsonl) → the items to post to a native
 * endpoint, each wrapped as `{at: ts_ms, message: <wire line>}` so the original timing is kept.
 * - app-server captures (`dir`): only `recv` lines (Codex → client), `msg` is the item.
 * - exec / Claude captures (`src`): only `stdout` lines with a parsed `json` object.
 * stderr, send, driver and runner lines are bookkeeping and are not imported.
 * Format detection: `dir` lines → "codex"; `src` stdout lines whose json looks like Claude
 * (type system/assistant/user/result/stream_event or a session_id) → "claude", like exec
 * (thread.*, turn.*, item.*, error) → "codex-exec"; else the runner's argv decides.
 */
import type { IngestFormat } from "./types";
import { finiteNum, isObject, str, type JsonObject } from "./util";

export type CaptureFormat = Exclude<IngestFormat, "canonical">;

export interface CaptureItem {
  /** ts_ms (epoch ms), else the ISO `ts`; absent when the line has neither. */
  at?: number | string;
  message: JsonObject;
}

export interface ParsedCapture {
  format: CaptureFormat;
  items: CaptureItem[];
  /** Capture lines read (non-blank) and lines not imported (bookkeeping, stderr, send…). */
  lineCount: number;
  skipped: number;
}

export class CaptureParseError extends Error {
  readonly line: number | null;
  constructor(message: string, line: number | null = null) {
    super(message);
    this.name = "CaptureParseError";
    this.line = line;
  }
}

const CLAUDE_TYPES = new Set(["system", "assistant", "user", "result", "stream_event"]);
const EXEC_TYPE = /^(thread|turn|item)\.|^error$/;

function detectFromJson(json: JsonObject): CaptureFormat | null {
  const type = str(json.type);
  if ((type && CLAUDE_TYPES.has(type)) || typeof json.session_id === "string") return "claude";
  if (type && EXEC_TYPE.test(type)) return "codex-exec";
  return null;
}

function detectFromArgv(argv: unknown): CaptureFormat | null {
  if (!Array.isArray(argv)) return null;
  const args = argv.filter((a): a is string => typeof a === "string");
  if (args.includes("app-server")) return "codex";
  if (args.includes("exec")) return "codex-exec";
  if (args.some((a) => /(^|\/)claude(-code)?[^/]*$/.test(a)) || args.includes("stream-json")) return "claude";
  return null;
}

export function parseCapture(text: string, expected?: CaptureFormat): ParsedCapture {
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  const items: CaptureItem[] = [];
  let lineCount = 0;
  let sawDir = false;
  let jsonVote: CaptureFormat | null = null;
  let argvVote: CaptureFormat | null = null;

  body.split("\n").forEach((row, i) => {
    const line = row.replace(/\r$/, "");
    if (line.trim() === "") return;
    lineCount++;
    let rec: unknown;
    try {
      rec = JSON.parse(line);
    } catch (err) {
      throw new CaptureParseError(`line ${i + 1}: invalid JSON: ${err instanceof Error ? err.message : String(err)}`, i + 1);
    }
    if (!isObject(rec)) throw new CaptureParseError(`line ${i + 1}: expected a JSON object`, i + 1);
    const at = finiteNum(rec.ts_ms) ?? str(rec.ts);
    if (typeof rec.dir === "string") {
      sawDir = true;
      if (rec.dir === "recv" && isObject(rec.msg)) items.push(at === null ? { message: rec.msg } : { at, message: rec.msg });
      else if (rec.dir === "driver") argvVote ??= detectFromArgv(rec.argv);
    } else if (typeof rec.src === "string") {
      if (rec.src === "stdout" && isObject(rec.json)) {
        items.push(at === null ? { message: rec.json } : { at, message: rec.json });
        jsonVote ??= detectFromJson(rec.json);
      } else if (rec.src === "runner") argvVote ??= detectFromArgv(rec.argv);
    } else {
      throw new CaptureParseError(`line ${i + 1}: not a capture line (expected "dir" or "src")`, i + 1);
    }
  });

  if (lineCount === 0) throw new CaptureParseError("empty capture file");
  const format = sawDir ? "codex" : (jsonVote ?? argvVote);
  if (!format) throw new CaptureParseError("cannot tell the capture's format (no app-server, codex exec or Claude lines)");
  if (expected && expected !== format) throw new CaptureParseError(`capture looks like ${format}, not ${expected}`);
  return { format, items, lineCount, skipped: lineCount - items.length };
}
