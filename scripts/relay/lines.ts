/**
 * Line handling shared by every mode: splitting a byte stream into lines, recognising JSON
 * objects, wrapping a native line with its receive time, and following the thread a stream is
 * about (codex exec names it once; Claude names it on every line).
 */
import { StringDecoder } from "node:string_decoder";
import type { NativeFormat } from "../../lib/ingest/types";

export const ENDPOINTS: Record<NativeFormat, string> = {
  codex: "/api/v1/ingest/codex",
  "codex-exec": "/api/v1/ingest/codex-exec",
  claude: "/api/v1/ingest/claude",
};

/** Splits a chunked byte stream into complete lines (without "\n" / "\r\n"); UTF-8 safe. */
export class LineSplitter {
  private decoder = new StringDecoder("utf8");
  private rest = "";

  push(chunk: Buffer | string): string[] {
    this.rest += typeof chunk === "string" ? chunk : this.decoder.write(chunk);
    const parts = this.rest.split("\n");
    this.rest = parts.pop() ?? "";
    return parts.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
  }

  /** The unterminated last line, if any (call at end of stream). */
  end(): string[] {
    this.rest += this.decoder.end();
    const last = this.rest;
    this.rest = "";
    return last.length ? [last.endsWith("\r") ? last.slice(0, -1) : last] : [];
  }
}

export type ParsedLine = { ok: true; value: Record<string, unknown>; text: string } | { ok: false; text: string; reason: string };

/** A line the relay can forward: a JSON object (surrounding whitespace trimmed). */
export function parseObjectLine(line: string): ParsedLine {
  const text = line.trim();
  if (text === "") return { ok: false, text, reason: "blank" };
  if (text[0] !== "{") return { ok: false, text, reason: "not a JSON object" };
  try {
    const value = JSON.parse(text);
    if (value === null || typeof value !== "object" || Array.isArray(value)) return { ok: false, text, reason: "not a JSON object" };
    return { ok: true, value, text };
  } catch (error) {
    return { ok: false, text, reason: `invalid JSON: ${(error as Error).message}` };
  }
}

/**
 * `{"at":<epoch ms>,"message":<line>}` built from the line's own text, so the server sees the
 * agent's bytes unchanged, and a re-send of the stored string is byte-identical.
 */
export function wrapLine(text: string, receivedAt: number): string {
  return `{"at":${Math.round(receivedAt)},"message":${text}}`;
}

/** True when a parsed object is already a relay wrapper (`{at, message}` only). */
export function isWrapped(value: Record<string, unknown>): boolean {
  const keys = Object.keys(value);
  return (
    keys.includes("message") &&
    keys.every((k) => k === "at" || k === "message") &&
    value.message !== null &&
    typeof value.message === "object" &&
    !Array.isArray(value.message)
  );
}

/** The native message inside a (possibly) wrapped line. */
export function unwrapValue(value: Record<string, unknown>): Record<string, unknown> {
  return isWrapped(value) ? (value.message as Record<string, unknown>) : value;
}

/** The thread a native line names (or null when it names none). */
export function threadOfLine(format: NativeFormat, message: Record<string, unknown>): string | null {
  const nonEmpty = (v: unknown) => (typeof v === "string" && v.length > 0 ? v : null);
  if (format === "codex-exec") return message.type === "thread.started" ? nonEmpty(message.thread_id) : null;
  if (format === "claude") return nonEmpty(message.session_id);
  const params = message.params as Record<string, unknown> | undefined;
  if (!params || typeof params !== "object") return null;
  const thread = params.thread as Record<string, unknown> | undefined;
  return nonEmpty(params.threadId) ?? (thread && typeof thread === "object" ? nonEmpty(thread.id) : null);
}

/** The stream's current thread after `lines` (wrapped or not), starting from `current`. */
export function followThread(format: NativeFormat, lines: string[], current: string | null): string | null {
  let thread = current;
  for (const line of lines) {
    const parsed = parseObjectLine(line);
    if (!parsed.ok) continue;
    thread = threadOfLine(format, unwrapValue(parsed.value)) ?? thread;
  }
  return thread;
}
