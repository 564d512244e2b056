/**
 * Request body text → items: one JSON value, a JSON array (its elements), or NDJSON
 * (Content-Type application/x-ndjson, or several lines that each parse on their own).
 * - An unparseable body throws BodyParseError (message names line and column).
 * - In NDJSON, a bad line is reported in `rejected` ({index, error: "line N: invalid JSON: …"},
 *   N = physical line, 1-based) and left in `items` as an InvalidLine placeholder so later
 *   indices stay aligned; normalizeBatch skips placeholders silently (they are already in
 *   `rejected`). Response: parsed.rejected + batch.rejected.
 * - Blank lines are skipped and do not take an index. A leading BOM is ignored.
 * - An NDJSON body whose lines are all invalid is unparseable (throws).
 */
import { locateJsonError } from "./json-locate";
import { MAX_ITEMS } from "./limits";
import { InvalidLine } from "./native";
import type { RejectedItem } from "./types";

export class BodyParseError extends Error {
  readonly line: number | null;
  readonly column: number | null;
  constructor(message: string, line: number | null = null, column: number | null = null) {
    super(message);
    this.name = "BodyParseError";
    this.line = line;
    this.column = column;
  }
}

/** More items than one request may carry (413): the producer should split its batch. */
export class TooManyItemsError extends Error {
  constructor() {
    super(`more than ${MAX_ITEMS} items in one request; send at most ${MAX_ITEMS} per request`);
    this.name = "TooManyItemsError";
  }
}

export interface ParsedBody {
  /** Parsed items; an invalid NDJSON line is an InvalidLine at its index. */
  items: unknown[];
  /** Invalid NDJSON lines, by item index. */
  rejected: RejectedItem[];
  kind: "json" | "array" | "ndjson";
}

function jsonErrorText(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text.replace(/^JSON\.parse: /, "");
}

/** Line/column (1-based) of the first invalid character of `text`. */
function errorPosition(text: string): { line: number; column: number } | null {
  const offset = locateJsonError(text);
  if (offset === null) return null;
  let line = 1;
  let lineStart = 0;
  for (let at = text.indexOf("\n"); at >= 0 && at < offset; at = text.indexOf("\n", at + 1)) {
    line++;
    lineStart = at + 1;
  }
  return { line, column: offset - lineStart + 1 };
}

function isNdjsonType(contentType: string | null | undefined): boolean {
  if (!contentType) return false;
  const mime = contentType.split(";")[0].trim().toLowerCase();
  return mime === "application/x-ndjson" || mime === "application/ndjson" || mime === "application/jsonl" || mime === "application/jsonlines";
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error };
  }
}

/** The body's lines as [physical line number (1-based), text without its CR], without splitting it all at once. */
function* physicalLines(text: string): Generator<[number, string]> {
  let start = 0;
  for (let number = 1; start <= text.length; number++) {
    const end = text.indexOf("\n", start);
    const stop = end < 0 ? text.length : end;
    yield [number, text.slice(start, text[stop - 1] === "\r" ? stop - 1 : stop)];
    if (end < 0) return;
    start = end + 1;
  }
}

function parseNdjson(text: string): ParsedBody {
  const items: unknown[] = [];
  const rejected: RejectedItem[] = [];
  for (const [number, line] of physicalLines(text)) {
    if (line.trim() === "") continue;
    // Counted before parsing, so a flood of tiny lines costs no more than the cap.
    if (items.length === MAX_ITEMS) throw new TooManyItemsError();
    const index = items.length;
    const parsed = tryParse(line);
    if (parsed.ok) {
      items.push(parsed.value);
    } else {
      const error = `line ${number}: invalid JSON: ${jsonErrorText(parsed.error).slice(0, 200)}`;
      items.push(new InvalidLine(error));
      rejected.push({ index, error });
    }
  }
  if (items.length === 0) throw new BodyParseError("empty body: expected a JSON object, a JSON array or NDJSON lines");
  if (rejected.length === items.length) {
    const first = rejected[0].error;
    throw new BodyParseError(`unparseable body: no line is valid JSON (${first})`, Number(/^line (\d+)/.exec(first)?.[1] ?? 1));
  }
  return { items, rejected, kind: "ndjson" };
}

export function parseBody(text: string, contentType?: string | null): ParsedBody {
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  if (body.trim() === "") throw new BodyParseError("empty body: expected a JSON object, a JSON array or NDJSON lines");
  if (isNdjsonType(contentType)) return parseNdjson(body);

  const whole = tryParse(body);
  if (whole.ok) {
    if (Array.isArray(whole.value)) {
      if (whole.value.length > MAX_ITEMS) throw new TooManyItemsError();
      return { items: whole.value, rejected: [], kind: "array" };
    }
    return { items: [whole.value], rejected: [], kind: "json" };
  }
  const nonBlank: string[] = [];
  for (const [, line] of physicalLines(body)) {
    if (line.trim() !== "") nonBlank.push(line);
    if (nonBlank.length === 2) break;
  }
  // Several lines whose first one is JSON by itself: NDJSON sent without its content type.
  if (nonBlank.length > 1 && tryParse(nonBlank[0]).ok) return parseNdjson(body);
  const pos = errorPosition(body);
  const where = pos ? ` at line ${pos.line} column ${pos.column}` : "";
  throw new BodyParseError(`invalid JSON${where}: ${jsonErrorText(whole.error)}`, pos?.line ?? null, pos?.column ?? null);
}
