/**
 * Idempotency keys for lines that carry no `id` of their own.
 *
 * key = `<format>:` + sha256 hex of the NUL-joined parts
 *   [format, threadId (resolved thread of the line, "" if none), stable JSON of the line
 *    (keys sorted recursively, without the `{at, message}` wrapper), the line's time]
 * where the time is the wrapped `at` as epoch ms, "" when the line carries a time of its own
 * (canonical `at`, Codex `emittedAtMs`: already part of the line), and the receive time when it
 * carries none. So re-sending or re-importing a line with a time yields the same key however the
 * producer split its batches, and two identical timeless lines are distinct events when they
 * arrive in different requests, the same event within one request.
 */
import { createHash } from "node:crypto";

export function stableJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    const s = JSON.stringify(value);
    return s === undefined ? "null" : s;
  }
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJson(obj[k])}`).join(",")}}`;
}

export interface KeyParts {
  format: string;
  threadId: string | null;
  line: unknown;
  /** The wrapped `at`, or the receive time of a line without any time of its own; null when the line carries its time. */
  at: number | null;
}

export function keyMaterial(parts: KeyParts): string {
  return [parts.format, parts.threadId ?? "", stableJson(parts.line), parts.at ?? ""].join("\u0000");
}

export function deriveKey(material: string, format: string): string {
  // The trailing "\u00000" keeps the keys of lines stored before keys stopped counting
  // identical lines within a batch (the first of them was occurrence 0).
  const hash = createHash("sha256").update(`${material}\u00000`).digest("hex");
  return `${format}:${hash}`;
}
