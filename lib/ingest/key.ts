/**
 * Idempotency keys for lines that carry no `id` of their own.
 *
 * key = `<format>:` + sha256 hex of the NUL-joined parts
 *   [format, threadId (resolved thread of the line, "" if none), stable JSON of the line
 *    (keys sorted recursively, without the `{at, message}` wrapper), wrapped `at` as epoch ms
 *    (or ""), occurrence]
 * where occurrence is the number of earlier lines in the same batch with identical parts, so
 * two genuinely identical lines in one batch stay distinct while re-importing the same capture
 * (or re-sending the same request) yields the same keys. Limitation: an identical unwrapped
 * line sent again in a *later* request (e.g. a second bare `{"type":"turn.started"}` of the
 * same codex-exec thread posted one line per request) gets the same key; relays should wrap
 * such lines with `{at, message}`.
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
  wrappedAt: number | null;
}

export function keyMaterial(parts: KeyParts): string {
  return [parts.format, parts.threadId ?? "", stableJson(parts.line), parts.wrappedAt ?? ""].join("\u0000");
}

export function deriveKey(material: string, occurrence: number, format: string): string {
  const hash = createHash("sha256").update(`${material}\u0000${occurrence}`).digest("hex");
  return `${format}:${hash}`;
}

/** Counts identical key material within one batch. */
export class OccurrenceCounter {
  private seen = new Map<string, number>();
  next(material: string): number {
    const n = this.seen.get(material) ?? 0;
    this.seen.set(material, n + 1);
    return n;
  }
}
